// The rule form's state and its conversion to and from S3's rule model (what the API stores and the
// gateway serves as XML). Pure functions, so the form and its tests share one definition.
import type { LifecycleRule } from "@/api/lifecycle";
import { formatDateTime } from "@/lib/format";

/** Storage classes a transition can go to, warm to cold (S3's waterfall). */
export const TRANSITION_CLASSES = [
  "INTELLIGENT_TIERING",
  "STANDARD_IA",
  "ONEZONE_IA",
  "GLACIER_IR",
  "GLACIER",
  "DEEP_ARCHIVE",
] as const;

export type WhenMode = "days" | "date";

export interface TransitionDraft {
  when: string; // days after creation, or a YYYY-MM-DD date (midnight UTC)
  storageClass: string;
}

export interface RuleDraft {
  id: string;
  enabled: boolean;
  prefix: string;
  tags: string; // "key=value, key2=value2"
  sizeGreaterThan: string; // bytes
  sizeLessThan: string; // bytes
  mode: WhenMode;
  transitions: TransitionDraft[];
  expiration: string; // days or date, "" = none
  abortUploadsDays: string; // "" = none
}

export function emptyDraft(): RuleDraft {
  return {
    id: "",
    enabled: true,
    prefix: "",
    tags: "",
    sizeGreaterThan: "",
    sizeLessThan: "",
    mode: "days",
    transitions: [{ when: "30", storageClass: "STANDARD_IA" }],
    expiration: "",
    abortUploadsDays: "",
  };
}

export type DraftResult =
  | { rule: LifecycleRule; errors?: undefined }
  | { rule?: undefined; errors: string[] };

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function wholeNumber(text: string, what: string, min: number, errors: string[]): number | null {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) < min) {
    errors.push(`${what} must be a whole number of at least ${min}`);
    return null;
  }
  return Number(t);
}

function whenValue(text: string, mode: WhenMode, what: string, min: number, errors: string[]) {
  if (mode === "date") {
    if (!DATE.test(text.trim())) {
      errors.push(`${what}: enter a date (the action applies from midnight UTC)`);
      return {};
    }
    return { date: `${text.trim()}T00:00:00Z` };
  }
  const days = wholeNumber(text, `${what} (days)`, min, errors);
  return days === null ? {} : { days };
}

/** Parse "k=v, k2=v2" into tags; an entry without "=" is a tag with an empty value. */
export function parseTags(text: string): Array<{ key: string; value: string }> {
  return text
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean)
    .map((t) => {
      const i = t.indexOf("=");
      return i < 0 ? { key: t, value: "" } : { key: t.slice(0, i).trim(), value: t.slice(i + 1).trim() };
    });
}

/** The rule a draft describes, or what is wrong with it (checks the server repeats, with more of its own). */
export function toRule(d: RuleDraft): DraftResult {
  const errors: string[] = [];
  const tags = parseTags(d.tags);
  const gt = d.sizeGreaterThan.trim() ? wholeNumber(d.sizeGreaterThan, "Size above", 0, errors) : null;
  const lt = d.sizeLessThan.trim() ? wholeNumber(d.sizeLessThan, "Size below", 1, errors) : null;
  const conditions = (d.prefix ? 1 : 0) + tags.length + (gt !== null ? 1 : 0) + (lt !== null ? 1 : 0);
  let filter: LifecycleRule["filter"] = {};
  if (conditions > 1) {
    filter = {
      and: {
        prefix: d.prefix || null,
        tags,
        object_size_greater_than: gt,
        object_size_less_than: lt,
      },
    };
  } else if (d.prefix) filter = { prefix: d.prefix };
  else if (tags[0]) filter = { tag: tags[0] };
  else if (gt !== null) filter = { object_size_greater_than: gt };
  else if (lt !== null) filter = { object_size_less_than: lt };

  const transitions = d.transitions
    .filter((t) => t.when.trim() !== "")
    .map((t, i) => ({
      storage_class: t.storageClass,
      ...whenValue(t.when, d.mode, `Transition ${i + 1}`, 0, errors),
    }));
  const expiration = d.expiration.trim() ? whenValue(d.expiration, d.mode, "Expiration", 1, errors) : null;
  const abort = d.abortUploadsDays.trim()
    ? wholeNumber(d.abortUploadsDays, "Abort incomplete uploads after", 1, errors)
    : null;
  if (!transitions.length && !expiration && abort === null) {
    errors.push("Add a transition, an expiration or an upload clean-up");
  }
  if (d.id.length > 255) errors.push("The rule ID has at most 255 characters");
  if (errors.length) return { errors };
  return {
    rule: {
      id: d.id.trim(),
      status: d.enabled ? "Enabled" : "Disabled",
      filter,
      transitions,
      expiration,
      abort_incomplete_multipart_upload_days: abort,
    },
  };
}

/** The form for an existing rule (the legacy rule-level prefix shows as the prefix). */
export function fromRule(rule: LifecycleRule): RuleDraft {
  const f = rule.filter ?? {};
  const and = f.and ?? null;
  const tags = and ? (and.tags ?? []) : f.tag ? [f.tag] : [];
  const byDate = [...(rule.transitions ?? []).map((t) => t.date), rule.expiration?.date].some(Boolean);
  const when = (days?: number | null, date?: string | null) =>
    date ? date.slice(0, 10) : days !== null && days !== undefined ? String(days) : "";
  return {
    id: rule.id,
    enabled: rule.status === "Enabled",
    prefix: (and ? and.prefix : f.prefix) ?? rule.prefix ?? "",
    tags: tags.map((t) => (t.value ? `${t.key}=${t.value}` : t.key)).join(", "),
    sizeGreaterThan: String((and ? and.object_size_greater_than : f.object_size_greater_than) ?? ""),
    sizeLessThan: String((and ? and.object_size_less_than : f.object_size_less_than) ?? ""),
    mode: byDate ? "date" : "days",
    transitions: (rule.transitions ?? []).map((t) => ({
      when: when(t.days, t.date),
      storageClass: t.storage_class,
    })),
    expiration: rule.expiration ? when(rule.expiration.days, rule.expiration.date) : "",
    abortUploadsDays: String(rule.abort_incomplete_multipart_upload_days ?? ""),
  };
}

/** "prefix logs/, tag kind=log, over 1024 B" or "every object". */
export function describeFilter(rule: LifecycleRule): string {
  const d = fromRule(rule);
  const parts: string[] = [];
  if (d.prefix) parts.push(`prefix ${d.prefix}`);
  if (d.tags) parts.push(`tags ${d.tags}`);
  if (d.sizeGreaterThan) parts.push(`over ${d.sizeGreaterThan} B`);
  if (d.sizeLessThan) parts.push(`under ${d.sizeLessThan} B`);
  return parts.length ? parts.join(", ") : "every object";
}

/** "STANDARD_IA after 30 d → GLACIER after 90 d; expire after 365 d". */
export function describeActions(rule: LifecycleRule): string {
  const at = (days?: number | null, date?: string | null) =>
    date ? `on ${date.slice(0, 10)}` : `after ${days ?? 0} d`;
  const parts: string[] = [];
  const moves = (rule.transitions ?? []).map((t) => `${t.storage_class} ${at(t.days, t.date)}`);
  if (moves.length) parts.push(moves.join(" → "));
  const e = rule.expiration;
  if (e && (e.days || e.date)) parts.push(`expire ${at(e.days, e.date)}`);
  if (rule.abort_incomplete_multipart_upload_days) {
    parts.push(`abort uploads after ${rule.abort_incomplete_multipart_upload_days} d`);
  }
  if ((rule.noncurrent_version_transitions ?? []).length || rule.noncurrent_version_expiration) {
    parts.push("noncurrent-version actions (no effect: buckets are unversioned)");
  }
  return parts.join("; ") || "—";
}

/** The next midnight UTC after `now` (ms): when objects that a days-rule makes due are acted on first. */
export function nextUtcMidnight(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

/** How a days-rule's timing reads, said plainly: S3 counts days to the midnight UTC after creation + N. */
export function daysRuleTiming(now: number): string {
  const at = new Date(nextUtcMidnight(now)).toISOString();
  return `Days count as S3 counts them: an object is due at the first midnight UTC at least that many days after it was written. A 0-day rule therefore waits for the next midnight UTC (${formatDateTime(at, true)}), not for the next sweep.`;
}
