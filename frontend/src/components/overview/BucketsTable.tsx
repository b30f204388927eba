import type { BucketUsage } from "@/api/overview";
import { type Column, EmptyState, Table } from "@/components/ui";
import { formatBytes, formatCount } from "@/lib/format";

const columns: Array<Column<BucketUsage>> = [
  { id: "name", header: "Bucket", cell: (b) => <span className="mono">{b.name}</span> },
  { id: "owner", header: "Owner", cell: (b) => b.owner, hideOnNarrow: true },
  { id: "tier", header: "Tier", cell: (b) => b.tier },
  { id: "objects", header: "Objects", cell: (b) => formatCount(b.object_count), align: "end" },
  { id: "stored", header: "Stored", cell: (b) => formatBytes(b.used_bytes), align: "end" },
];

export function BucketsTable({ buckets }: { buckets: BucketUsage[] }) {
  return (
    <Table
      caption="Buckets"
      columns={columns}
      rows={buckets}
      rowKey={(b) => b.name}
      empty={
        <EmptyState
          title="No buckets yet"
          description="Create a bucket through the S3 gateway (for example `aws s3 mb s3://NAME`) with your access key."
        />
      }
    />
  );
}
