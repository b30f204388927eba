import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  downloadUrl,
  type ItemState,
  itemsQueryOptions,
  type RestoreBatch,
  type RestoreItem,
} from "@/api/restores";
import { Badge, Button, Card, type Column, QueryState, Select, Table } from "@/components/ui";
import { formatBytes, formatCount, formatDateTime } from "@/lib/format";
import { stateLabel, stateTone } from "./restore-format";
import "./restores.css";

const ITEM_STATES: Array<ItemState | ""> = ["", "pending", "ongoing", "ready", "failed", "expired"];

/** The batch's objects, filtered by state, page by page. */
export function ItemsCard({ batch }: { batch: RestoreBatch }) {
  const [state, setState] = useState<ItemState | "">("");
  const [pages, setPages] = useState<Array<number | null>>([null]);
  const afterId = pages[pages.length - 1] ?? null;
  const items = useQuery(itemsQueryOptions(batch.id, state || null, afterId, batch.updated_at));
  const columns: Array<Column<RestoreItem>> = [
    { id: "key", header: "Key", cell: (i) => <code className="restore-key">{i.key}</code> },
    { id: "size", header: "Size", align: "end", cell: (i) => formatBytes(i.size), hideOnNarrow: true },
    {
      id: "state",
      header: "State",
      cell: (i) => <Badge tone={stateTone(i.state)}>{stateLabel(i.state)}</Badge>,
    },
    {
      id: "when",
      header: "Ready / expected",
      cell: (i) => formatDateTime(i.ready_at ?? i.expected_ready_at),
      hideOnNarrow: true,
    },
    {
      id: "polls",
      header: "Polls",
      align: "end",
      cell: (i) => formatCount(i.poll_count),
      hideOnNarrow: true,
    },
    {
      id: "action",
      header: "",
      cell: (i) =>
        i.state === "ready" ? (
          <a href={downloadUrl(i.bucket, i.key)} download>
            Download
          </a>
        ) : i.last_error ? (
          <span className="restore-error" title={i.last_error}>
            {i.last_error.slice(0, 80)}
          </span>
        ) : null,
    },
  ];
  return (
    <Card
      title="Objects"
      description={`${formatCount(batch.progress.objects)} objects; 100 per page.`}
      actions={
        <Select
          label="Show"
          value={state}
          onChange={(e) => {
            setState(e.target.value as ItemState | "");
            setPages([null]);
          }}
          options={ITEM_STATES.map((s) => ({ value: s, label: s ? stateLabel(s) : "all" }))}
        />
      }
    >
      <QueryState
        query={items}
        loading="Listing objects"
        errorTitle="Objects could not be listed"
        retry={false}
      >
        {(data) => (
          <Table
            caption="Objects of the batch"
            columns={columns}
            rows={data.items}
            rowKey={(i) => i.id}
            empty={<p className="muted">No objects in this state.</p>}
          />
        )}
      </QueryState>
      <div className="row restore-pager">
        <Button size="sm" disabled={pages.length <= 1} onClick={() => setPages(pages.slice(0, -1))}>
          Previous
        </Button>
        <Button
          size="sm"
          disabled={!items.data?.next_after_id}
          onClick={() => items.data?.next_after_id && setPages([...pages, items.data.next_after_id])}
        >
          Next
        </Button>
      </div>
    </Card>
  );
}
