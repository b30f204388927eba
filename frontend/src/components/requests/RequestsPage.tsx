import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { type RequestFilters, type RequestTrace, requestsQueryOptions } from "@/api/requests";
import { Badge, Button, Card, type Column, Input, PageHeader, QueryState, Table } from "@/components/ui";
import { RequestWaterfall } from "./RequestWaterfall";
import { formatMs } from "./waterfall";
import "./requests.css";

function statusTone(status: number) {
  if (status >= 500) return "danger" as const;
  if (status >= 400) return "warning" as const;
  return "success" as const;
}

/** Sampled gateway requests, filtered by operation, bucket and time, each opening its phases as a waterfall. */
export function RequestsPage() {
  const [draft, setDraft] = useState({ operation: "", bucket: "", slower: "" });
  const [filters, setFilters] = useState<RequestFilters>({});
  const [selected, setSelected] = useState<RequestTrace | null>(null);
  const query = useQuery(requestsQueryOptions(filters));

  const columns: Array<Column<RequestTrace>> = [
    { id: "at", header: "When", cell: (t) => new Date(t.at).toLocaleTimeString() },
    { id: "operation", header: "Operation", cell: (t) => t.operation },
    { id: "bucket", header: "Bucket", cell: (t) => t.bucket || "—", hideOnNarrow: true },
    { id: "status", header: "Status", cell: (t) => <Badge tone={statusTone(t.status)}>{t.status}</Badge> },
    { id: "total", header: "Time", align: "end", cell: (t) => formatMs(t.total_ms) },
    { id: "why", header: "Kept because", cell: (t) => t.reason, hideOnNarrow: true },
    {
      id: "open",
      header: <span className="visually-hidden">Phases</span>,
      label: "Phases",
      cell: (t) => (
        <Button
          variant="secondary"
          size="sm"
          onClick={() => setSelected(t)}
          aria-label={`Phases of ${t.request_id}`}
        >
          Phases
        </Button>
      ),
    },
  ];

  return (
    <>
      <PageHeader
        title="Requests"
        description="Sampled gateway requests and where their time went: every request sent with X-Tierpilot-Trace: 1, a small random share and the slowest of each minute. Find one by the x-amz-request-id your client logged."
      />
      <Card title="Filter">
        <form
          className="requests-filters"
          onSubmit={(e) => {
            e.preventDefault();
            const slower = Number.parseFloat(draft.slower);
            setFilters({
              operation: draft.operation.trim() || undefined,
              bucket: draft.bucket.trim() || undefined,
              slowerThanMs: Number.isFinite(slower) && slower >= 0 ? slower : undefined,
            });
          }}
        >
          <Input
            label="Operation"
            hint="e.g. GET object, PUT object"
            value={draft.operation}
            onChange={(e) => setDraft({ ...draft, operation: e.target.value })}
          />
          <Input
            label="Bucket"
            value={draft.bucket}
            onChange={(e) => setDraft({ ...draft, bucket: e.target.value })}
          />
          <Input
            label="Slower than (ms)"
            type="number"
            min={0}
            value={draft.slower}
            onChange={(e) => setDraft({ ...draft, slower: e.target.value })}
          />
          <Button type="submit">Apply</Button>
        </form>
      </Card>
      {selected ? (
        <Card
          title={`Request ${selected.request_id}`}
          actions={
            <Button variant="secondary" size="sm" onClick={() => setSelected(null)}>
              Close
            </Button>
          }
        >
          <RequestWaterfall trace={selected} />
        </Card>
      ) : null}
      <QueryState query={query} loading="Loading requests" retry={false}>
        {(data) => (
          <Card title="Sampled requests" padded={false}>
            <Table
              caption="Sampled gateway requests"
              columns={columns}
              rows={data.items}
              rowKey={(t) => t.request_id}
              empty="No sampled requests yet: send one with the header X-Tierpilot-Trace: 1."
            />
          </Card>
        )}
      </QueryState>
    </>
  );
}
