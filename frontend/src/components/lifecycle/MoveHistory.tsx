import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { type Move, type MoveState, movesQueryOptions, useRetryFailed, useRetryMove } from "@/api/lifecycle";
import {
  Badge,
  type BadgeTone,
  Button,
  type Column,
  ErrorBanner,
  QueryState,
  Select,
  Table,
} from "@/components/ui";
import { formatBytes, formatCount, formatDateTime, formatDuration } from "@/lib/format";
import "./lifecycle.css";

const TONES: Record<string, BadgeTone> = {
  done: "success",
  failed: "danger",
  skipped: "neutral",
  queued: "info",
  running: "info",
  switched: "info",
};
const STATES: MoveState[] = ["queued", "running", "switched", "done", "skipped", "failed"];

/** Executed and queued moves, newest first, with failures and a retry for each. */
export function MoveHistory({ bucket }: { bucket: string | null }) {
  const [state, setState] = useState<MoveState | null>(null);
  const moves = useQuery(movesQueryOptions(bucket, state));
  const retry = useRetryMove();
  const retryAll = useRetryFailed(bucket);
  const failed = moves.data?.counts.failed ?? 0;

  const columns: Array<Column<Move>> = [
    { id: "when", header: "Queued", cell: (m) => formatDateTime(m.created_at), hideOnNarrow: true },
    { id: "object", header: "Object", cell: (m) => <span className="lc-key">{`${m.bucket}/${m.key}`}</span> },
    {
      id: "action",
      header: "Action",
      cell: (m) =>
        m.action === "transition"
          ? `${m.from_tier} → ${m.to_tier} (${m.to_class})`
          : m.action === "expiration"
            ? `expire from ${m.from_tier}`
            : "abort upload",
    },
    { id: "size", header: "Size", align: "end", cell: (m) => formatBytes(m.size) },
    {
      id: "state",
      header: "State",
      cell: (m) => <Badge tone={TONES[m.state] ?? "neutral"}>{m.state}</Badge>,
    },
    { id: "attempts", header: "Attempts", align: "end", cell: (m) => m.attempts, hideOnNarrow: true },
    {
      id: "took",
      header: "Copy",
      align: "end",
      hideOnNarrow: true,
      cell: (m) => (m.copy_seconds != null ? formatDuration(m.copy_seconds) : "—"),
    },
    {
      id: "error",
      header: "Error / retry",
      cell: (m) =>
        m.state === "failed" ? (
          <span className="lc-error">
            <span>{m.error}</span>
            <Button
              size="sm"
              onClick={() => retry.mutate(m.id)}
              loading={retry.isPending && retry.variables === m.id}
              aria-label={`Retry move of ${m.key}`}
            >
              Retry
            </Button>
          </span>
        ) : (
          <span className="muted">{m.error ?? ""}</span>
        ),
    },
  ];

  return (
    <div className="lc-history">
      <div className="lc-history__bar">
        <Select
          label="State"
          value={state ?? ""}
          onChange={(e) => setState((e.target.value || null) as MoveState | null)}
          options={[
            { value: "", label: "all states" },
            ...STATES.map((s) => ({ value: s, label: `${s} (${formatCount(moves.data?.counts[s] ?? 0)})` })),
          ]}
        />
        {failed > 0 ? (
          <Button onClick={() => retryAll.mutate()} loading={retryAll.isPending}>
            Retry {formatCount(failed)} failed
          </Button>
        ) : null}
      </div>
      {retry.isError ? <ErrorBanner title="Not retried" error={retry.error} /> : null}
      <QueryState query={moves} loading="Loading moves">
        {(data) => (
          <Table
            caption="Lifecycle moves"
            columns={columns}
            rows={data.moves}
            rowKey={(m) => m.id}
            empty={<p className="muted">No moves yet: they appear when a sweep finds objects due.</p>}
          />
        )}
      </QueryState>
    </div>
  );
}
