import { type FormEvent, useState } from "react";
import { useDryRun, useSaveRule } from "@/api/lifecycle";
import { Button, ErrorBanner, FieldList, FieldRows, type FieldValue } from "@/components/ui";
import { PreviewChart, PreviewSummary } from "./PreviewChart";
import { endFields, FILTER_FIELDS, transitionFields } from "./rule-fields";
import { daysRuleTiming, type RuleDraft, toRule } from "./rule-form";
import "./lifecycle.css";

/** Add or edit one rule of a bucket; "What would this rule do?" previews it before it is saved. */
export function RuleForm({
  bucket,
  classes,
  tiers,
  initial,
  replaceId,
  onDone,
}: {
  bucket: string;
  /** Classes the bucket's tiers serve: other classes are refused by the server. */
  classes: string[];
  tiers: string[];
  initial: RuleDraft;
  replaceId: string | null;
  onDone: () => void;
}) {
  const [draft, setDraft] = useState<RuleDraft>(initial);
  const [shownErrors, setShownErrors] = useState<string[]>([]);
  const dryRun = useDryRun(bucket);
  const save = useSaveRule(bucket);
  const set = (patch: Partial<RuleDraft>) => {
    setDraft((d) => ({ ...d, ...patch }));
    dryRun.reset();
  };
  const fields = {
    values: draft,
    onChange: (name: string, value: FieldValue) => set({ [name]: value }),
    rowClassName: "lc-form__grid",
  };

  const build = () => {
    const result = toRule(draft);
    setShownErrors(result.errors ?? []);
    return result.rule ?? null;
  };
  const tryIt = () => {
    const rule = build();
    if (rule) dryRun.mutate({ rule, replaceId });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const rule = build();
    if (rule) save.mutate({ rule, replaceId }, { onSuccess: onDone });
  };

  return (
    <form
      className="lc-form"
      aria-label={replaceId ? `Edit rule ${replaceId}` : "New rule"}
      onSubmit={submit}
      noValidate
    >
      <FieldList {...fields} fields={FILTER_FIELDS} />
      {draft.mode === "days" ? <p className="muted lc-form__timing">{daysRuleTiming(Date.now())}</p> : null}

      <fieldset className="lc-form__transitions">
        <legend>Transitions</legend>
        <FieldRows
          keyPrefix="transition"
          className="lc-form__row"
          rows={draft.transitions}
          fields={(i) => transitionFields(i, draft.mode, classes)}
          removeLabel={(_, i) => `Remove transition ${i + 1}`}
          onChange={(transitions) => set({ transitions })}
        />
        <Button
          size="sm"
          onClick={() => set({ transitions: [...draft.transitions, { when: "", storageClass: "GLACIER" }] })}
        >
          Add transition
        </Button>
      </fieldset>

      <FieldList {...fields} fields={endFields(draft.mode)} />

      {shownErrors.length ? <ErrorBanner title="Check the rule" error={shownErrors.join("; ")} /> : null}
      {dryRun.isError ? <ErrorBanner title="This rule would be refused" error={dryRun.error} /> : null}
      {save.isError ? <ErrorBanner title="Not saved" error={save.error} /> : null}

      <div className="lc-form__actions">
        <Button onClick={tryIt} loading={dryRun.isPending}>
          What would this rule do?
        </Button>
        <Button type="submit" variant="primary" loading={save.isPending}>
          Save rule
        </Button>
        <Button variant="ghost" onClick={onDone}>
          Cancel
        </Button>
      </div>

      {dryRun.data ? (
        <section className="lc-dry-run" aria-label="Dry run of this rule">
          <h3 className="lc-dry-run__title">With this rule (nothing saved yet)</h3>
          <PreviewSummary preview={dryRun.data.preview} />
          <PreviewChart preview={dryRun.data.preview} tiers={tiers} />
        </section>
      ) : null}
    </form>
  );
}
