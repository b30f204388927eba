import { useQuery } from "@tanstack/react-query";
import { bucketsQueryOptions } from "@/api/catalog";
import type { SharedBucket } from "@/api/sharing";
import { sharedWithMeQueryOptions } from "@/api/sharing";
import { Card, type Column, PageHeader, QueryState, Select, Table } from "@/components/ui";
import { SharingPanel } from "./SharingPanel";
import "./sharing.css";

const sharedColumns: Array<Column<SharedBucket>> = [
  { id: "bucket", header: "Bucket", cell: (b) => <span className="mono">{b.bucket}</span> },
  { id: "owner", header: "Owner", cell: (b) => b.owner },
  { id: "access", header: "You may", cell: (b) => b.access.join(", ") },
];

/** The Sharing page: one of the caller's buckets and who may reach it, and what others share with them. */
export function SharingPage({ bucket, onBucket }: { bucket: string; onBucket: (name: string) => void }) {
  const buckets = useQuery(bucketsQueryOptions());
  const shared = useQuery(sharedWithMeQueryOptions());
  return (
    <>
      <PageHeader
        title="Sharing"
        description="Give other users access to a bucket, publish a prefix, and edit the bucket policy."
      />
      <div className="stack-lg">
        <QueryState query={buckets} loading="Loading your buckets…">
          {(data) => (
            <Select
              label="Bucket"
              value={bucket}
              onChange={(e) => onBucket(e.target.value)}
              options={[
                { value: "", label: "Choose a bucket…" },
                ...data.map((b) => ({ value: b.name, label: b.name })),
              ]}
            />
          )}
        </QueryState>
        {bucket ? <SharingPanel key={bucket} bucket={bucket} /> : null}
        <Card title="Shared with me" description="Other users' buckets you may use with your S3 keys.">
          <QueryState
            query={shared}
            isEmpty={(data) => data.length === 0}
            empty={<p className="muted">Nobody shares a bucket with you.</p>}
          >
            {(data) => (
              <Table
                caption="Buckets shared with me"
                columns={sharedColumns}
                rows={data}
                rowKey={(b) => b.bucket}
              />
            )}
          </QueryState>
        </Card>
      </div>
    </>
  );
}
