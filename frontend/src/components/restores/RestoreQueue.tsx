import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { queueQueryOptions, type RestoreBatch, type RestoreSummary, type Scope } from "@/api/restores";
import { Badge, Card, type Column, EmptyState, ProgressBar, QueryState, Table } from "@/components/ui";
import { formatBytes, formatCount, formatDateTime, formatDuration } from "@/lib/format";
import { etaText, formatUsd, readyShare, stateLabel, stateTone } from "./restore-format";
import "./restores.css";

/** Re-renders every second so ETAs count down between polls. */
export function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const id = window.setInterval(() => setNow(Date.now()), intervalMs);
    return () => window.clearInterval(id);
  }, [intervalMs]);
  return now;
}

export function BatchProgress({ batch }: { batch: RestoreBatch }) {
  const p = batch.progress;
  return (
    <ProgressBar
      label={`${batch.name} ready`}
      value={p.ready}
      max={p.objects}
      thresholds={null}
      valueText={`${formatCount(p.ready)} of ${formatCount(p.objects)} objects ready`}
      caption={
        <>
          {Math.round(readyShare(p) * 100)} % · {formatCount(p.ready)}/{formatCount(p.objects)} objects ·{" "}
          {formatBytes(p.ready_bytes)} of {formatBytes(p.bytes)}
          {p.failed ? <span className="restore-failed-count"> · {formatCount(p.failed)} failed</span> : null}
        </>
      }
    />
  );
}

export function RestoreQueue({ scope }: { scope: Scope }) {
  const queue = useQuery(queueQueryOptions(scope));
  const now = useNow();
  if (!queue.data) {
    return (
      <QueryState
        query={queue}
        loading="Loading the restore queue"
        errorTitle="The restore queue could not be loaded"
        retry={false}
      />
    );
  }
  const { summary, batches } = queue.data;
  const columns: Array<Column<RestoreBatch>> = [
    {
      id: "name",
      header: "Batch",
      cell: (b) => (
        <div className="restore-batch-name">
          <Link to="/restores" search={{ batch: b.id, scope }}>
            {b.name}
          </Link>
          <span className="muted">
            {b.source.bucket ? `${String(b.source.bucket)} · ` : ""}
            {b.speed} · {b.days} d
          </span>
        </div>
      ),
    },
    ...(scope === "everyone"
      ? [{ id: "owner", header: "Owner", cell: (b: RestoreBatch) => b.owner, hideOnNarrow: true }]
      : []),
    {
      id: "state",
      header: "State",
      cell: (b) => <Badge tone={stateTone(b.state)}>{stateLabel(b.state)}</Badge>,
    },
    {
      id: "progress",
      header: "Progress",
      cell: (b) => (
        <div className="restore-progress">
          <BatchProgress batch={b} />
        </div>
      ),
    },
    {
      id: "submitted",
      header: "Submitted",
      cell: (b) => formatDateTime(b.submitted_at ?? b.created_at),
      hideOnNarrow: true,
    },
    {
      id: "eta",
      header: "Ready",
      cell: (b) =>
        b.state === "in_progress" ? etaText(b.estimated_ready_at, b.state, now) : formatDateTime(b.ready_at),
    },
    { id: "cost", header: "Cost (USD)", align: "end", cell: (b) => formatUsd(b.cost_estimate_usd) },
  ];
  return (
    <div className="stack-lg">
      <SummaryCards summary={summary} now={now} scope={scope} />
      <Card title="Restore queue" description="Newest first; the page follows running batches live.">
        <Table
          caption="Restore batches"
          columns={columns}
          rows={batches.items}
          rowKey={(b) => b.id}
          empty={
            <EmptyState
              title="No restores yet"
              description="Pick archived objects with “New restore” (or from the Browser) to bring them back."
            />
          }
        />
      </Card>
      {scope === "everyone" ? <TierCounts summary={summary} /> : null}
    </div>
  );
}

function SummaryCards({ summary, now, scope }: { summary: RestoreSummary; now: number; scope: Scope }) {
  const by = summary.batches_by_state;
  const oldest = summary.oldest_in_progress;
  const waiting = oldest ? Math.max(0, (now - Date.parse(ensureZone(oldest.created_at))) / 1000) : 0;
  return (
    <div className="grid-stats">
      <div className="ui-card ui-stat">
        <p className="ui-stat__label">In progress</p>
        <p className="ui-stat__value">{formatCount(by.in_progress ?? 0)}</p>
        <p className="ui-stat__detail">
          {summary.single_restores_active
            ? `and ${formatCount(summary.single_restores_active)} single restores through S3`
            : "batches"}
        </p>
      </div>
      <div className="ui-card ui-stat">
        <p className="ui-stat__label">Ready</p>
        <p className="ui-stat__value">{formatCount(by.ready ?? 0)}</p>
        <p className="ui-stat__detail">batches readable now</p>
      </div>
      <div className="ui-card ui-stat">
        <p className="ui-stat__label">Need attention</p>
        <p className="ui-stat__value">{formatCount(by.failed ?? 0)}</p>
        <p className="ui-stat__detail">batches with failed objects (retryable)</p>
      </div>
      <div className="ui-card ui-stat">
        <p className="ui-stat__label">Oldest running</p>
        <p className="ui-stat__value">{oldest ? formatDuration(waiting) : "—"}</p>
        <div className="ui-stat__detail">
          {oldest ? (
            <Link to="/restores" search={{ batch: oldest.id, scope }}>
              {oldest.name}
              {scope === "everyone" ? ` (${oldest.owner})` : ""}
            </Link>
          ) : (
            "nothing waiting"
          )}
        </div>
      </div>
    </div>
  );
}

function TierCounts({ summary }: { summary: RestoreSummary }) {
  return (
    <Card title="By tier" description="Objects of every batch, by tier and state.">
      <Table
        caption="Restored objects by tier"
        columns={[
          { id: "tier", header: "Tier", cell: (t) => t.tier },
          { id: "objects", header: "Objects", align: "end", cell: (t) => formatCount(t.objects) },
          { id: "bytes", header: "Volume", align: "end", cell: (t) => formatBytes(t.bytes) },
          { id: "pending", header: "Queued", align: "end", cell: (t) => formatCount(t.pending) },
          { id: "ongoing", header: "Restoring", align: "end", cell: (t) => formatCount(t.ongoing) },
          { id: "ready", header: "Ready", align: "end", cell: (t) => formatCount(t.ready) },
          { id: "failed", header: "Failed", align: "end", cell: (t) => formatCount(t.failed) },
          { id: "expired", header: "Expired", align: "end", cell: (t) => formatCount(t.expired) },
        ]}
        rows={summary.tiers}
        rowKey={(t) => t.tier}
        empty={<p className="muted">No restores on any tier yet.</p>}
      />
    </Card>
  );
}

function ensureZone(iso: string): string {
  return /(Z|[+-]\d\d:?\d\d)$/.test(iso) ? iso : `${iso}Z`;
}
