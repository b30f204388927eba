import { ApiError } from "@/api/client";
import type { RestoreSpeed, SpendPlanBody, SpendPlanUsage } from "@/api/spend";
import { formatCount, formatGib, formatMoney } from "@/lib/format";

/** The Edit plan form's fields as typed (strings until sent). */
export interface PlanFormValues {
  reads_gib: string;
  read_requests: string;
  write_requests: string;
  restores_gib: string;
  restore_speed: RestoreSpeed;
}

export type PlanField = keyof PlanFormValues;
export type PlanFormErrors = Partial<Record<PlanField, string>>;

const FIELDS: PlanField[] = ["reads_gib", "read_requests", "write_requests", "restores_gib", "restore_speed"];
const COUNTS: PlanField[] = ["read_requests", "write_requests"];

/** The form filled from a saved plan, or empty (nothing planned but storage). */
export function planToForm(plan: SpendPlanUsage | null | undefined): PlanFormValues {
  return {
    reads_gib: String(plan?.reads_gib ?? 0),
    read_requests: String(plan?.read_requests ?? 0),
    write_requests: String(plan?.write_requests ?? 0),
    restores_gib: String(plan?.restores_gib ?? 0),
    restore_speed: plan?.restore_speed ?? "standard",
  };
}

/** What the browser can tell before sending: numbers, not negative, whole where they are counts. */
export function validatePlanForm(values: PlanFormValues): PlanFormErrors {
  const errors: PlanFormErrors = {};
  for (const field of FIELDS) {
    if (field === "restore_speed") continue;
    const text = values[field].trim();
    const n = Number(text);
    if (text === "" || !Number.isFinite(n)) errors[field] = "Give a number (0 for none).";
    else if (n < 0) errors[field] = "Must not be negative.";
    else if (COUNTS.includes(field) && !Number.isInteger(n))
      errors[field] = "Must be a whole number of requests.";
  }
  return errors;
}

/** The PUT body: the numbers as typed (the server checks them again). */
export function toPlanBody(values: PlanFormValues): SpendPlanBody {
  return {
    reads_gib: Number(values.reads_gib),
    read_requests: Number(values.read_requests),
    write_requests: Number(values.write_requests),
    restores_gib: Number(values.restores_gib),
    restore_speed: values.restore_speed,
  };
}

/** A refused save's complaints by field: FastAPI's 422 `errors` (loc ["body", field]) or a domain error's `field`. */
export function serverPlanErrors(error: unknown): PlanFormErrors {
  if (!(error instanceof ApiError) || error.status !== 422) return {};
  const body = error.body as { errors?: Array<{ loc?: unknown[]; msg?: string }>; field?: string } | null;
  const out: PlanFormErrors = {};
  for (const e of body?.errors ?? []) {
    const field = (e.loc ?? []).find((part): part is PlanField => FIELDS.includes(part as PlanField));
    if (field && !out[field]) out[field] = e.msg ?? error.message;
  }
  if (body?.field && FIELDS.includes(body.field as PlanField)) out[body.field as PlanField] = error.message;
  return out;
}

/** One line on what a plan holds besides storage: "+ 50 GiB read, 2,000,000 GET, 1,000 PUT, 40 GiB restored (bulk)". */
export function planSummary(plan: SpendPlanUsage | null | undefined, storageUsd: number): string {
  const storage = `storage ${formatMoney(storageUsd)}`;
  if (!plan) return `${storage}; no usage planned: storage only`;
  const parts = [
    plan.reads_gib ? `${formatGib(plan.reads_gib)} read` : "",
    plan.read_requests ? `${formatCount(plan.read_requests)} GET` : "",
    plan.write_requests ? `${formatCount(plan.write_requests)} PUT` : "",
    plan.restores_gib ? `${formatGib(plan.restores_gib)} restored (${plan.restore_speed})` : "",
  ].filter(Boolean);
  return `${storage} + ${parts.length ? parts.join(", ") : "no reads, requests or restores"}`;
}
