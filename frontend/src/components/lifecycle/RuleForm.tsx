import { type FormEvent, useState } from "react";
import { useDryRun, useSaveRule } from "@/api/lifecycle";
import { Button, Checkbox, ErrorBanner, Input, Select } from "@/components/ui";
import { PreviewChart, PreviewSummary } from "./PreviewChart";
import { daysRuleTiming, type RuleDraft, TRANSITION_CLASSES, toRule, type WhenMode } from "./rule-form";

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
  const classOptions = TRANSITION_CLASSES.map((c) => ({
    value: c,
    label: classes.includes(c) ? c : `${c} (no tier)`,
    disabled: !classes.includes(c),
  }));
  const whenLabel = draft.mode === "days" ? "days after creation" : "date (UTC)";

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
      <div className="lc-form__grid">
        <Input
          label="Rule ID"
          value={draft.id}
          onChange={(e) => set({ id: e.target.value })}
          hint="empty: one is made up"
          maxLength={255}
        />
        <Checkbox
          label="Enabled"
          checked={draft.enabled}
          onChange={(e) => set({ enabled: e.target.checked })}
        />
        <Input
          label="Key prefix"
          value={draft.prefix}
          onChange={(e) => set({ prefix: e.target.value })}
          hint="empty: every key"
        />
        <Input
          label="Tags"
          value={draft.tags}
          onChange={(e) => set({ tags: e.target.value })}
          hint="key=value, separated by commas; all must match"
        />
        <Input
          label="Size above (bytes)"
          inputMode="numeric"
          value={draft.sizeGreaterThan}
          onChange={(e) => set({ sizeGreaterThan: e.target.value })}
          hint="without a size filter, objects under 128 KiB stay (as in S3)"
        />
        <Input
          label="Size below (bytes)"
          inputMode="numeric"
          value={draft.sizeLessThan}
          onChange={(e) => set({ sizeLessThan: e.target.value })}
        />
        <Select
          label="Schedule by"
          value={draft.mode}
          onChange={(e) => set({ mode: e.target.value as WhenMode })}
          options={[
            { value: "days", label: "age (days after creation)" },
            { value: "date", label: "date (every object from that day)" },
          ]}
        />
      </div>
      {draft.mode === "days" ? <p className="muted lc-form__timing">{daysRuleTiming(Date.now())}</p> : null}

      <fieldset className="lc-form__transitions">
        <legend>Transitions</legend>
        {draft.transitions.map((t, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity besides their position
          <div className="lc-form__row" key={i}>
            <Input
              label={`Transition ${i + 1}: ${whenLabel}`}
              type={draft.mode === "date" ? "date" : "text"}
              inputMode={draft.mode === "days" ? "numeric" : undefined}
              value={t.when}
              onChange={(e) =>
                set({
                  transitions: draft.transitions.map((x, j) =>
                    j === i ? { ...x, when: e.target.value } : x,
                  ),
                })
              }
            />
            <Select
              label={`Transition ${i + 1}: storage class`}
              value={t.storageClass}
              options={classOptions}
              onChange={(e) =>
                set({
                  transitions: draft.transitions.map((x, j) =>
                    j === i ? { ...x, storageClass: e.target.value } : x,
                  ),
                })
              }
            />
            <Button
              size="sm"
              variant="ghost"
              aria-label={`Remove transition ${i + 1}`}
              onClick={() => set({ transitions: draft.transitions.filter((_, j) => j !== i) })}
            >
              Remove
            </Button>
          </div>
        ))}
        <Button
          size="sm"
          onClick={() => set({ transitions: [...draft.transitions, { when: "", storageClass: "GLACIER" }] })}
        >
          Add transition
        </Button>
      </fieldset>

      <div className="lc-form__grid">
        <Input
          label={`Expire: ${whenLabel}`}
          type={draft.mode === "date" ? "date" : "text"}
          inputMode={draft.mode === "days" ? "numeric" : undefined}
          value={draft.expiration}
          onChange={(e) => set({ expiration: e.target.value })}
          hint="empty: never"
        />
        <Input
          label="Abort incomplete uploads after (days)"
          inputMode="numeric"
          value={draft.abortUploadsDays}
          onChange={(e) => set({ abortUploadsDays: e.target.value })}
          hint="empty: never"
        />
      </div>

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
