import { queryOptions, useQuery } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "@/api/client";
import { Badge, type Column, QueryState, Table } from "@/components/ui";
import { formatBytes, formatDateTime } from "@/lib/format";

export type ObjectVersion = Schemas["VersionOut"];

/** Every version of one object and its delete markers, newest first (versioned buckets). */
export const versionsQueryOptions = (bucket: string, key: string) =>
  queryOptions({
    queryKey: ["catalog", "versions", bucket, key] as const,
    queryFn: () =>
      unwrap(api.GET("/api/buckets/{name}/versions", { params: { path: { name: bucket }, query: { key } } })),
  });

function lockLabel(v: ObjectVersion): string | null {
  const parts: string[] = [];
  if (v.lock_mode && v.lock_until)
    parts.push(`${v.lock_mode.toLowerCase()} until ${formatDateTime(v.lock_until)}`);
  if (v.legal_hold) parts.push("legal hold");
  return parts.length ? parts.join(", ") : null;
}

const columns: Array<Column<ObjectVersion>> = [
  {
    id: "version",
    header: "Version",
    cell: (v) => (
      <span className="mono">
        {v.version_id} {v.is_latest ? <Badge tone="info">latest</Badge> : null}
      </span>
    ),
  },
  {
    id: "kind",
    header: "Kind",
    cell: (v) => (v.delete_marker ? <Badge tone="warning">delete marker</Badge> : formatBytes(v.size)),
  },
  { id: "modified", header: "Last modified", cell: (v) => formatDateTime(v.last_modified) },
  { id: "class", header: "Class", cell: (v) => (v.delete_marker ? "" : v.storage_class), hideOnNarrow: true },
  { id: "lock", header: "Object lock", cell: (v) => lockLabel(v) ?? <span className="muted">none</span> },
];

export function VersionsPanel({ bucket, objectKey }: { bucket: string; objectKey: string }) {
  const versions = useQuery(versionsQueryOptions(bucket, objectKey));
  return (
    // one version (or an unversioned bucket): nothing more to show
    <QueryState query={versions} loading="Loading the versions…" isEmpty={(data) => data.length < 2}>
      {(data) => (
        <section aria-label="Versions">
          <h3>Versions</h3>
          <Table
            caption={`Versions of ${objectKey}`}
            columns={columns}
            rows={data}
            rowKey={(v) => v.version_id}
          />
        </section>
      )}
    </QueryState>
  );
}
