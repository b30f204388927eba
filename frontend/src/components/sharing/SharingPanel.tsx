import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import {
  type Access,
  type PolicyCheck,
  sharingQueryOptions,
  type UserGrant,
  useCheckPolicy,
  useDeletePolicy,
  useGrantUser,
  usePublishPrefix,
  useRevokeUser,
  useSavePolicy,
  useUnpublishPrefix,
} from "@/api/sharing";
import {
  Badge,
  Button,
  Card,
  type Column,
  ConfirmDialog,
  ErrorBanner,
  errorText,
  Field,
  Input,
  LoadingState,
  Select,
  Table,
} from "@/components/ui";

const ACCESS_OPTIONS = [
  { value: "read", label: "Read (download and list)" },
  { value: "read-write", label: "Read-write (also upload and delete)" },
];

/** Who may reach one bucket besides its owner and admins: users, public prefixes and the bucket policy. */
export function SharingPanel({ bucket }: { bucket: string }) {
  const sharing = useQuery(sharingQueryOptions(bucket));
  if (sharing.isPending) return <LoadingState label="Loading the bucket's sharing…" />;
  if (sharing.isError) return <ErrorBanner error={sharing.error} onRetry={() => sharing.refetch()} />;
  const data = sharing.data;
  return (
    <div className="stack-lg">
      <UsersCard bucket={bucket} users={data.users} />
      <PublicCard bucket={bucket} prefixes={data.public_prefixes} />
      <PolicyCard
        key={data.policy ?? ""}
        bucket={bucket}
        policy={data.policy ?? null}
        words={data.policy_words}
        problems={data.policy_problems ?? []}
        isPublic={data.policy_public}
      />
      <Card
        title="ACLs and settings"
        description="Set through the S3 API (put-bucket-acl, ownership controls, public access block)."
      >
        <ul className="sharing-facts">
          <li>
            Bucket ACL:{" "}
            {data.acl_grants.length ? data.acl_grants.join("; ") : `private (only the owner, ${data.owner})`}
          </li>
          <li>Object ownership: {data.ownership ?? "not set (object writer owns)"}</li>
          <li>
            Public access block:{" "}
            {data.public_block
              ? Object.entries(data.public_block)
                  .filter(([, on]) => on)
                  .map(([flag]) => flag.replaceAll("_", " "))
                  .join(", ") || "configured, all off"
              : "not configured"}
          </li>
        </ul>
      </Card>
    </div>
  );
}

function UsersCard({ bucket, users }: { bucket: string; users: UserGrant[] }) {
  const grant = useGrantUser(bucket);
  const revoke = useRevokeUser(bucket);
  const [username, setUsername] = useState("");
  const [access, setAccess] = useState<Access>("read");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    grant.mutate({ username: username.trim(), access }, { onSuccess: () => setUsername("") });
  };
  const columns: Array<Column<UserGrant>> = [
    { id: "user", header: "User", cell: (u) => u.username },
    {
      id: "access",
      header: "Access",
      cell: (u) => <Badge tone={u.access === "read-write" ? "warning" : "info"}>{u.access}</Badge>,
    },
    {
      id: "remove",
      header: "",
      cell: (u) => (
        <Button
          size="sm"
          variant="ghost"
          onClick={() => revoke.mutate(u.username)}
          aria-label={`Remove ${u.username}`}
        >
          Remove
        </Button>
      ),
    },
  ];
  return (
    <Card title="Users" description="Other tierpilot users who may use this bucket with their own S3 keys.">
      {users.length ? (
        <Table
          caption={`Users with access to ${bucket}`}
          columns={columns}
          rows={users}
          rowKey={(u) => String(u.user_id)}
        />
      ) : (
        <p className="muted">Nobody else has access.</p>
      )}
      <form className="sharing-form" onSubmit={submit}>
        <Input label="Username" value={username} onChange={(e) => setUsername(e.target.value)} required />
        <Select
          label="Access"
          value={access}
          options={ACCESS_OPTIONS}
          onChange={(e) => setAccess(e.target.value as Access)}
        />
        <Button type="submit" variant="primary" loading={grant.isPending} disabled={!username.trim()}>
          Grant
        </Button>
      </form>
      {grant.isError ? (
        <p className="ui-field__error" role="alert">
          {errorText(grant.error)}
        </p>
      ) : null}
      {revoke.isError ? (
        <p className="ui-field__error" role="alert">
          {errorText(revoke.error)}
        </p>
      ) : null}
    </Card>
  );
}

function PublicCard({ bucket, prefixes }: { bucket: string; prefixes: string[] }) {
  const publish = usePublishPrefix(bucket);
  const unpublish = useUnpublishPrefix(bucket);
  const [prefix, setPrefix] = useState("");
  const [asking, setAsking] = useState(false);
  const what = prefix ? `every object under “${prefix}”` : `every object in ${bucket}`;
  return (
    <Card
      title="Public prefixes"
      description="Anyone who can reach the gateway may read and list these objects, without credentials."
    >
      {prefixes.length ? (
        <ul className="sharing-list">
          {prefixes.map((p) => (
            <li key={p}>
              <Badge tone="danger">public</Badge> <span className="mono">{p || "(whole bucket)"}</span>{" "}
              <Button size="sm" variant="ghost" onClick={() => unpublish.mutate(p)}>
                Make private
              </Button>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">Nothing is public.</p>
      )}
      <form
        className="sharing-form"
        onSubmit={(e) => {
          e.preventDefault();
          setAsking(true);
        }}
      >
        <Input
          label="Prefix"
          hint="e.g. release/ — empty makes the whole bucket public"
          value={prefix}
          onChange={(e) => setPrefix(e.target.value)}
        />
        <Button type="submit" variant="danger">
          Make public…
        </Button>
      </form>
      <ConfirmDialog
        open={asking}
        title="Make this public?"
        description={`Anyone on the network, with no account and no key, will be able to download and list ${what}. Do not do this for data that is not meant to be published.`}
        confirmLabel="Make public"
        pending={publish.isPending}
        error={publish.error}
        onCancel={() => setAsking(false)}
        onConfirm={() => publish.mutate(prefix, { onSuccess: () => setAsking(false) })}
      />
    </Card>
  );
}

function PolicyCard({
  bucket,
  policy,
  words,
  problems,
  isPublic,
}: {
  bucket: string;
  policy: string | null;
  words: string[];
  problems: string[];
  isPublic: boolean;
}) {
  const [text, setText] = useState(policy ?? "");
  const [checked, setChecked] = useState<PolicyCheck | null>(null);
  const check = useCheckPolicy(bucket);
  const save = useSavePolicy(bucket);
  const remove = useDeletePolicy(bucket);
  const runCheck = () => check.mutate(text, { onSuccess: setChecked });
  return (
    <Card
      title="Bucket policy"
      description="The S3 bucket policy (JSON) the gateway evaluates on every request; the entries above are part of it."
      actions={isPublic ? <Badge tone="danger">public</Badge> : null}
    >
      {problems.length ? (
        <div className="sharing-invalid" role="alert">
          <p>
            <Badge tone="danger">invalid</Badge> The stored policy cannot be read in full. Until you replace
            or delete it, what cannot be read denies: other users and anonymous requests are refused wherever
            it could have applied, while you and admins keep access.
          </p>
          <ul className="sharing-list" aria-label="What cannot be read">
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {words.length ? (
        <ul className="sharing-list" aria-label="What the policy allows">
          {words.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      ) : (
        <p className="muted">No policy: only the owner and admins may use the bucket.</p>
      )}
      <Field
        label="Policy (JSON)"
        hint="Checked by the server before it is saved."
        error={checked?.error ?? undefined}
      >
        {(control) => (
          <textarea
            {...control}
            className="ui-input mono"
            rows={10}
            spellCheck={false}
            value={text}
            onChange={(e) => {
              setText(e.target.value);
              setChecked(null);
            }}
          />
        )}
      </Field>
      {checked?.valid ? (
        <section aria-label="What this policy would allow">
          <p>This policy would allow{checked.public ? " — including anonymous access" : ""}:</p>
          <ul className="sharing-list">
            {checked.words.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </section>
      ) : null}
      <div className="sharing-actions">
        <Button onClick={runCheck} loading={check.isPending} disabled={!text.trim()}>
          Check
        </Button>
        <Button
          variant="primary"
          loading={save.isPending}
          disabled={!text.trim()}
          onClick={() => save.mutate(text, { onSuccess: (d) => setText(d.policy ?? "") })}
        >
          Save policy
        </Button>
        {policy ? (
          <Button
            variant="danger"
            loading={remove.isPending}
            onClick={() => remove.mutate(undefined, { onSuccess: () => setText("") })}
          >
            Delete policy
          </Button>
        ) : null}
      </div>
      {save.isError ? (
        <p className="ui-field__error" role="alert">
          {errorText(save.error)}
        </p>
      ) : null}
      {check.isError ? (
        <p className="ui-field__error" role="alert">
          {errorText(check.error)}
        </p>
      ) : null}
    </Card>
  );
}
