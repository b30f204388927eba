import { useQuery } from "@tanstack/react-query";
import {
  ALL_FIXITY_CSV_URL,
  type BucketFixity,
  bucketFixityCsvUrl,
  type FailingObject,
  fixityQueryOptions,
} from "@/api/integrity";
import { Badge, Card, type Column, EmptyState, PageHeader, QueryState, Table } from "@/components/ui";
import { formatCount, formatDateTime } from "@/lib/format";

const LINK = "ui-button ui-button--secondary ui-button--sm";

const FAILING_COLUMNS: Array<Column<FailingObject>> = [
  { id: "key", header: "Key", cell: (f) => <span className="mono">{f.key}</span>, sortValue: (f) => f.key },
  {
    id: "result",
    header: "Result",
    cell: (f) => <Badge tone="danger">{f.result}</Badge>,
    sortValue: (f) => f.result,
  },
  {
    id: "when",
    header: "Checked",
    cell: (f) => formatDateTime(f.checked_at),
    sortValue: (f) => f.checked_at,
  },
  {
    id: "checksum",
    header: "Checksum",
    hideOnNarrow: true,
    cell: (f) => (
      <span className="mono">
        {f.algorithm} expected {f.expected}
        {f.found ? `, found ${f.found}` : ", object missing"}
      </span>
    ),
  },
];

function BucketIntegrity({ fixity }: { fixity: BucketFixity }) {
  const status =
    fixity.failures > 0 ? (
      <Badge tone="danger">{formatCount(fixity.failures)} failing</Badge>
    ) : fixity.checks === 0 ? (
      <Badge>not checked yet</Badge>
    ) : (
      <Badge tone="success">intact</Badge>
    );
  return (
    <Card
      title={fixity.bucket}
      level={3}
      actions={
        <a className={LINK} href={bucketFixityCsvUrl(fixity.bucket)} download>
          Fixity log (CSV)
        </a>
      }
    >
      <div className="stack">
        <p>
          {status} {formatCount(fixity.checks)} check{fixity.checks === 1 ? "" : "s"} done;{" "}
          {formatCount(fixity.checked_objects)} of {formatCount(fixity.objects)} objects checked; last check{" "}
          {formatDateTime(fixity.last_check_at)}
        </p>
        {fixity.failing.length ? (
          <Table
            caption={`Objects of ${fixity.bucket} whose latest check failed`}
            columns={FAILING_COLUMNS}
            rows={fixity.failing}
            rowKey={(f) => `${f.key}@${f.version_id}`}
          />
        ) : null}
      </div>
    </Card>
  );
}

/** Each bucket's fixity: how often its stored checksums were re-read and compared, and which did not match. */
export function IntegrityPage({ isAdmin }: { isAdmin: boolean }) {
  const fixity = useQuery(fixityQueryOptions());
  return (
    <>
      <PageHeader
        title="Integrity"
        description={
          <>
            A fixity check reads an object's bytes back from its tier and compares their checksum with the one
            stored when it was written. The worker audits every bucket on a schedule;{" "}
            <code>tierpilot fixity run</code> runs one now.
          </>
        }
        actions={
          isAdmin ? (
            <a className="ui-button ui-button--secondary ui-button--md" href={ALL_FIXITY_CSV_URL} download>
              All buckets' fixity log (CSV)
            </a>
          ) : undefined
        }
      />
      <QueryState
        query={fixity}
        loading="Loading fixity…"
        isEmpty={(data) => data.length === 0}
        empty={<EmptyState title="No buckets" description="Fixity is kept per bucket; you have none yet." />}
      >
        {(data) => (
          <div className="stack">
            {data.map((b) => (
              <BucketIntegrity key={b.bucket} fixity={b} />
            ))}
          </div>
        )}
      </QueryState>
    </>
  );
}
