import type { AuditEvent } from "@/api/audit";
import { Badge, type BadgeTone, type Column } from "@/components/ui";
import { formatDateTime } from "@/lib/format";

function tone(event: string): BadgeTone {
  if (event.endsWith("_failed") || event.endsWith(".disabled") || event.endsWith(".deleted")) return "danger";
  if (event.startsWith("auth.login") || event === "auth.logout") return "neutral";
  return "info";
}

function detailText(detail: AuditEvent["detail"]): string {
  return Object.entries(detail)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ");
}

/** The audit table: when, who, what and the event's details. */
export const columns: Array<Column<AuditEvent>> = [
  { id: "at", header: "When", cell: (e) => formatDateTime(e.at) },
  {
    id: "event",
    header: "Event",
    cell: (e) => (
      <span className="cell-stack">
        <Badge tone={tone(e.event)}>{e.event}</Badge>
        {e.target ? <span className="cell-sub mono">{e.target}</span> : null}
      </span>
    ),
  },
  {
    id: "actor",
    header: "Who",
    cell: (e) => (
      <span className="cell-stack">
        <span>{e.actor || <span className="muted">—</span>}</span>
        {e.client ? <span className="cell-sub mono">{e.client}</span> : null}
      </span>
    ),
  },
  {
    id: "detail",
    header: "Detail",
    hideOnNarrow: true,
    cell: (e) => (
      <span className="cell-sub" title={detailText(e.detail)}>
        {detailText(e.detail) || "—"}
      </span>
    ),
  },
];
