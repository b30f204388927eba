import { keepPreviousData, queryOptions } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type AuditEvent = Schemas["AuditEventOut"];
export type AuditPage = Schemas["AuditPage"];

/** What the audit log is narrowed to; empty fields do not filter. Times are ISO 8601 in UTC. */
export interface AuditFilter {
  event?: string;
  actor?: string;
  since?: string;
  until?: string;
}

export const auditKeys = {
  all: ["audit"] as const,
  pages: () => [...auditKeys.all, "page"] as const,
  page: (filter: AuditFilter, beforeId: number | null) => [...auditKeys.pages(), filter, beforeId] as const,
};

export const AUDIT_PAGE_SIZE = 50;

function query(filter: AuditFilter) {
  return {
    event: filter.event || undefined,
    actor: filter.actor || undefined,
    since: filter.since || undefined,
    until: filter.until || undefined,
  };
}

/** One page of events, newest first; `beforeId` is the previous page's `next_before_id`. */
export const auditPageQueryOptions = (filter: AuditFilter, beforeId: number | null) =>
  queryOptions({
    queryKey: auditKeys.page(filter, beforeId),
    queryFn: () =>
      unwrap(
        api.GET("/api/audit", {
          params: { query: { ...query(filter), before_id: beforeId ?? undefined, limit: AUDIT_PAGE_SIZE } },
        }),
      ),
    placeholderData: keepPreviousData,
  });

/** The CSV export of every event the filter selects (oldest first), as a same-origin link. */
export function auditCsvHref(filter: AuditFilter): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query(filter))) {
    if (value) params.set(name, value);
  }
  const search = params.toString();
  return `/api/audit.csv${search ? `?${search}` : ""}`;
}
