// The lifecycle rule form's fields as data: RuleForm renders them with the shared FieldList.
import type { FieldKey, FieldLayout, FieldSpec } from "@/components/ui";
import { type RuleDraft, TRANSITION_CLASSES, type TransitionDraft, type WhenMode } from "./rule-form";

type Name = FieldKey<RuleDraft>;

export const FILTER_FIELDS: Array<FieldLayout<Name>> = [
  [
    { name: "id", label: "Rule ID", kind: "text", help: "empty: one is made up", maxLength: 255 },
    { name: "enabled", label: "Enabled", kind: "checkbox" },
    { name: "prefix", label: "Key prefix", kind: "text", help: "empty: every key" },
    { name: "tags", label: "Tags", kind: "text", help: "key=value, separated by commas; all must match" },
    {
      name: "sizeGreaterThan",
      label: "Size above (bytes)",
      kind: "number",
      step: 1,
      help: "without a size filter, objects under 128 KiB stay (as in S3)",
    },
    { name: "sizeLessThan", label: "Size below (bytes)", kind: "number", step: 1 },
    {
      name: "mode",
      label: "Schedule by",
      kind: "select",
      options: [
        { value: "days", label: "age (days after creation)" },
        { value: "date", label: "date (every object from that day)" },
      ],
    },
  ],
];

/** A day count or a date, as the rule schedules by age or by date. */
function when<K extends string>(name: K, label: string, mode: WhenMode, help?: string): FieldSpec<K> {
  return mode === "date"
    ? { name, label: `${label}date (UTC)`, kind: "date", help }
    : { name, label: `${label}days after creation`, kind: "number", step: 1, help };
}

/** One transition's fields; classes no tier of the bucket serves are shown but cannot be chosen. */
export function transitionFields(
  index: number,
  mode: WhenMode,
  classes: string[],
): Array<FieldSpec<FieldKey<TransitionDraft>>> {
  return [
    when("when", `Transition ${index + 1}: `, mode),
    {
      name: "storageClass",
      label: `Transition ${index + 1}: storage class`,
      kind: "select",
      options: TRANSITION_CLASSES.map((c) => ({
        value: c,
        label: classes.includes(c) ? c : `${c} (no tier)`,
        disabled: !classes.includes(c),
      })),
    },
  ];
}

export function endFields(mode: WhenMode): Array<FieldLayout<Name>> {
  return [
    [
      when("expiration", "Expire: ", mode, "empty: never"),
      {
        name: "abortUploadsDays",
        label: "Abort incomplete uploads after (days)",
        kind: "number",
        step: 1,
        help: "empty: never",
      },
    ],
  ];
}
