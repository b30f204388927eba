import { type FormEvent, useState } from "react";
import { type MappingRow, useIdentityDryRun } from "@/api/identity";
import { Button, Card, EmptyState, ErrorBanner, FieldList, type FieldSpec } from "@/components/ui";
import { MappingTable } from "./MappingTable";

/** The groups typed in: one per line or separated by commas, blanks and repeats dropped. */
export function parseGroups(text: string): string[] {
  return [...new Set(text.split(/[\n,]/).map((g) => g.trim()))].filter(Boolean);
}

const ROLES = ["viewer", "member", "manager"]; // weakest first, as the projects domain ranks them

/** Project → role the rows give: the strongest where several groups name one project, as a sign-in does. */
export function projectsGiven(rows: readonly MappingRow[]): Array<{ project: string; role: string }> {
  const given = new Map<string, string>();
  for (const r of rows) {
    if (r.status !== "mapped" || !r.project || !r.role) continue;
    const held = given.get(r.project);
    if (held === undefined || ROLES.indexOf(r.role) > ROLES.indexOf(held)) given.set(r.project, r.role);
  }
  return [...given]
    .map(([project, role]) => ({ project, role }))
    .sort((a, b) => a.project.localeCompare(b.project));
}

function Outcome({ rows }: { rows: readonly MappingRow[] }) {
  const given = projectsGiven(rows);
  if (given.length === 0) {
    return <p className="identity-outcome">These groups give no project.</p>;
  }
  return (
    <p className="identity-outcome">
      These groups give{" "}
      {given.map((g, i) => (
        <span key={g.project}>
          {i > 0 ? ", " : null}
          <strong>{g.project}</strong> as {g.role}
        </span>
      ))}
      .
    </p>
  );
}

const fields: Array<FieldSpec<"groups">> = [
  {
    name: "groups",
    label: "Groups",
    kind: "textarea",
    rows: 3,
    spellCheck: false,
    placeholder: "lab-a\nlab-b",
    help: "As the provider or directory names them: one per line or separated by commas.",
  },
];

/** Admins: the projects and roles a sign-in with these groups would give, changing nothing. */
export function DryRunCard() {
  const dryRun = useIdentityDryRun();
  const [text, setText] = useState("");
  const [error, setError] = useState<string | undefined>();

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const groups = parseGroups(text);
    if (groups.length === 0) {
      setError("Enter at least one group.");
      return;
    }
    setError(undefined);
    dryRun.mutate(groups);
  };

  return (
    <Card
      id="dry-run"
      title="Dry run"
      description="What a sign-in with these groups would give. Nothing is changed."
      padded={false}
    >
      <form className="stack card-inset identity-dry-run" onSubmit={submit}>
        <FieldList
          fields={fields}
          values={{ groups: text }}
          errors={{ groups: error }}
          onChange={(_, value) => setText(String(value))}
        />
        <div>
          <Button type="submit" variant="primary" loading={dryRun.isPending}>
            Try these groups
          </Button>
        </div>
        {dryRun.isError ? <ErrorBanner title="The dry run failed" error={dryRun.error} /> : null}
      </form>
      {dryRun.data ? (
        <div className="card-inset" role="status">
          <Outcome rows={dryRun.data} />
        </div>
      ) : null}
      {dryRun.data ? (
        <MappingTable
          caption="What these groups would give"
          rows={dryRun.data}
          empty={
            <div className="card-inset">
              <EmptyState title="No groups" />
            </div>
          }
        />
      ) : null}
    </Card>
  );
}
