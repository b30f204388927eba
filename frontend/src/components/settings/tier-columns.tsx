import type { Tier, TierHealth } from "@/api/tiers";
import { Badge, type Column } from "@/components/ui";
import { formatBytes, formatCount, formatDateTime, formatDuration } from "@/lib/format";

function restoreDelays(t: Tier): string {
  const speeds = ["expedited", "standard", "bulk"].filter((s) => t.restore_delays[s] != null);
  return speeds.map((s) => `${s} ${formatDuration(t.restore_delays[s] ?? 0)}`).join(" · ");
}

/** A tier's last probe: answers (with its latency) or not (with the reason). */
export function HealthCell({ health, checking }: { health: TierHealth | undefined; checking: boolean }) {
  if (!health) return <span className="cell-sub">{checking ? "checking…" : "not checked"}</span>;
  const checked = `checked ${formatDateTime(health.checked_at)}`;
  return health.ok ? (
    <div className="cell-stack">
      <Badge tone="success" title={checked}>
        answers
      </Badge>
      <span className="cell-sub">{Math.round(health.latency_ms)} ms</span>
    </div>
  ) : (
    <div className="cell-stack">
      <Badge tone="danger" title={checked}>
        no answer
      </Badge>
      <span className="cell-sub" title={health.detail}>
        {health.detail}
      </span>
    </div>
  );
}

/** The tier table without its actions: name, driver, classes, delays, capacity, health. */
export const columns: Array<Column<Tier>> = [
  {
    id: "name",
    header: "Tier",
    cell: (t) => (
      <div className="cell-stack">
        <strong>{t.name}</strong>
        {t.location ? (
          <span className="cell-sub mono" title={t.location}>
            {t.location}
          </span>
        ) : null}
      </div>
    ),
  },
  { id: "driver", header: "Driver", cell: (t) => <Badge>{t.driver}</Badge>, hideOnNarrow: true },
  {
    id: "classes",
    header: "Storage classes",
    cell: (t) => <span className="badge-list">{t.storage_classes.join(", ") || "—"}</span>,
    hideOnNarrow: true,
  },
  {
    id: "access",
    header: "Access",
    cell: (t) =>
      t.offline ? (
        <div className="cell-stack">
          <Badge tone="warning">offline archive</Badge>
          {restoreDelays(t) ? <span className="cell-sub">restore: {restoreDelays(t)}</span> : null}
        </div>
      ) : (
        <Badge tone="success">online</Badge>
      ),
  },
  {
    id: "min-days",
    header: "Min. storage",
    cell: (t) => (t.min_storage_days ? `${t.min_storage_days} days` : "—"),
    align: "end",
    hideOnNarrow: true,
  },
  { id: "used", header: "Used", cell: (t) => formatBytes(t.used_bytes), align: "end" },
  {
    id: "capacity",
    header: "Capacity",
    cell: (t) => (t.capacity_bytes ? formatBytes(t.capacity_bytes) : "unlimited"),
    align: "end",
    hideOnNarrow: true,
  },
  {
    id: "objects",
    header: "Objects",
    cell: (t) => `${formatCount(t.object_count)} in ${formatCount(t.bucket_count)} buckets`,
    align: "end",
    hideOnNarrow: true,
  },
];
