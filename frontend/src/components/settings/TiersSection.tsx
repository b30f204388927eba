import { useQuery } from "@tanstack/react-query";
import { type Tier, tiersQueryOptions } from "@/api/tiers";
import { Badge, Card, type Column, ErrorBanner, LoadingState, Table } from "@/components/ui";
import { formatBytes, formatCount, formatDuration } from "@/lib/format";

function restoreDelays(t: Tier): string {
  const speeds = ["expedited", "standard", "bulk"].filter((s) => t.restore_delays[s] != null);
  return speeds.map((s) => `${s} ${formatDuration(t.restore_delays[s] ?? 0)}`).join(" · ");
}

const columns: Array<Column<Tier>> = [
  {
    id: "name",
    header: "Tier",
    cell: (t) => (
      <div className="cell-stack">
        <strong>{t.name}</strong>
        <span className="cell-sub mono" title={t.location}>
          {t.location}
        </span>
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

/** Admins: the storage tiers buckets live on, with where they are and how they are read. */
export function TiersSection() {
  const tiers = useQuery(tiersQueryOptions());
  return (
    <Card
      id="tiers"
      title="Tiers"
      description="Storage locations with their access rules. Offline archive tiers need a restore before an object can be read."
      padded={false}
    >
      {tiers.isPending ? (
        <LoadingState label="Loading tiers…" />
      ) : tiers.isError ? (
        <div className="card-inset">
          <ErrorBanner title="Could not load tiers" error={tiers.error} onRetry={() => tiers.refetch()} />
        </div>
      ) : (
        <Table caption="Storage tiers" columns={columns} rows={tiers.data} rowKey={(t) => t.id} />
      )}
    </Card>
  );
}
