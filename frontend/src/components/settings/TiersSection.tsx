import { useQuery } from "@tanstack/react-query";
import { overviewQueryOptions, type TierUsage } from "@/api/overview";
import { Badge, Card, type Column, ErrorBanner, LoadingState, Table } from "@/components/ui";
import { formatBytes, formatCount } from "@/lib/format";

const columns: Array<Column<TierUsage>> = [
  { id: "name", header: "Tier", cell: (t) => <strong>{t.name}</strong> },
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
      t.offline ? <Badge tone="warning">offline archive</Badge> : <Badge tone="success">online</Badge>,
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
    cell: (t) => formatCount(t.object_count),
    align: "end",
    hideOnNarrow: true,
  },
];

/** Admins: the storage tiers buckets live on. */
export function TiersSection() {
  // The overview already carries every tier with its usage; a dedicated tiers API replaces this
  // when tiers become editable here.
  const tiers = useQuery({ ...overviewQueryOptions(), select: (o) => o.tiers });
  return (
    <Card
      id="tiers"
      title="Tiers"
      description="Storage locations with their access rules. Adding and editing tiers here comes with the S3 gateway release; until then the demo seed and the CLI create them."
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
