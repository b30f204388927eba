import { ApiError } from "@/api/client";
import type { Project, QuotaSet } from "@/api/projects";

const GIB = 1024 ** 3;

/** Quota bars turn amber at 80 % and red at 95 %: the writes past 100 % are refused. */
export const QUOTA_THRESHOLDS = { warning: 0.8, danger: 0.95 };

/**
 * The form fields a refusal names: a domain error's `field` (any status: a missing user is a 404, a taken
 * name a 409) or FastAPI's validation errors by their `loc`. `aliases` map the API's name to the form's.
 */
export function refusedFields(
  error: unknown,
  fields: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const body = error.body as { field?: unknown; errors?: Array<{ loc?: unknown[]; msg?: string }> } | null;
  const out: Record<string, string> = {};
  const put = (name: string, message: string) => {
    const field = aliases[name] ?? name;
    if (fields.includes(field) && !out[field]) out[field] = message;
  };
  for (const e of body?.errors ?? []) {
    const name = (e.loc ?? []).at(-1);
    if (typeof name === "string") put(name, e.msg ?? error.message);
  }
  if (typeof body?.field === "string") {
    // the service's messages begin with the field they are about ("user: no such user")
    const prefix = `${body.field}:`;
    put(
      body.field,
      error.message.startsWith(prefix) ? error.message.slice(prefix.length).trim() : error.message,
    );
  }
  return out;
}

/** The quota fields as typed: GiB and objects, empty for no quota. */
export interface QuotaValues {
  quota_gib: string;
  quota_objects: string;
}

export function quotaValues(project: Pick<Project, "quota_bytes" | "quota_objects"> | null): QuotaValues {
  return {
    quota_gib: project?.quota_bytes == null ? "" : String(+(project.quota_bytes / GIB).toFixed(3)),
    quota_objects: project?.quota_objects == null ? "" : String(project.quota_objects),
  };
}

/** Complaints about typed quotas, by field; none when the values can be sent. */
export function validateQuota(values: QuotaValues): Partial<Record<keyof QuotaValues, string>> {
  const errors: Partial<Record<keyof QuotaValues, string>> = {};
  const gib = values.quota_gib.trim();
  const objects = values.quota_objects.trim();
  if (gib && !(Number(gib) >= 0)) errors.quota_gib = "Give a size in GiB (empty for no quota).";
  if (objects && !(Number.isInteger(Number(objects)) && Number(objects) >= 0))
    errors.quota_objects = "Give a whole number of objects (empty for no quota).";
  return errors;
}

/** The API's quota body: bytes and objects, null for none. */
export function quotaBody(values: QuotaValues): QuotaSet {
  const gib = values.quota_gib.trim();
  const objects = values.quota_objects.trim();
  return {
    quota_bytes: gib ? Math.round(Number(gib) * GIB) : null,
    quota_objects: objects ? Number(objects) : null,
  };
}

/** The form's name of each quota field the API names. */
export const QUOTA_ALIASES = { quota_bytes: "quota_gib" } as const;

/** Whether the user may change members and quota: a manager of the project, or an admin. */
export function canManage(project: Project, user: { username: string; is_admin: boolean }): boolean {
  return user.is_admin || project.members.some((m) => m.username === user.username && m.role === "manager");
}
