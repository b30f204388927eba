import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { CartesianGrid, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import {
  batchQueryOptions,
  downloadUrl,
  exportUrls,
  type ItemState,
  itemsQueryOptions,
  type RestoreBatch,
  type RestoreItem,
  type Scope,
  SPEEDS,
  type Speed,
  useRetryBatch,
  useUpgradeSpeed,
} from "@/api/restores";
import {
  AXIS,
  axisLabel,
  Badge,
  Button,
  Card,
  ChartFrame,
  type Column,
  ErrorBanner,
  GRID_STROKE,
  LoadingState,
  PageHeader,
  QueryState,
  Select,
  Table,
} from "@/components/ui";
import { formatBytes, formatCount, formatDateTime, formatDuration } from "@/lib/format";
import { BatchProgress, useNow } from "./RestoreQueue";
import { etaText, fasterSpeeds, formatUsd, stateLabel, stateTone, timelineRows } from "./restore-format";

const ITEM_STATES: Array<ItemState | ""> = ["", "pending", "ongoing", "ready", "failed", "expired"];

export function BatchDetail({ id, scope }: { id: number; scope: Scope }) {
  const detail = useQuery(batchQueryOptions(id));
  const now = useNow();
  if (detail.isPending) return <LoadingState label="Loading the batch" />;
  if (detail.error) {
    return (
      <>
        <BackLink scope={scope} />
        <ErrorBanner error={detail.error} title="This restore batch could not be loaded" />
      </>
    );
  }
  const { batch, timeline } = detail.data;
  const live = batch.state === "in_progress";
  return (
    <>
      <BackLink scope={scope} />
      <PageHeader
        title={batch.name}
        description={`${batch.owner} · ${batch.speed} · kept ${batch.days} days · batch ${batch.id}`}
        actions={<Badge tone={stateTone(batch.state)}>{stateLabel(batch.state)}</Badge>}
      />
      <div className="stack-lg">
        <Card title="Progress" description={live ? "Updates live while objects are restored." : undefined}>
          <div className="stack">
            <BatchProgress batch={batch} />
            <dl className="restore-facts">
              <Fact label="Submitted" value={formatDateTime(batch.submitted_at)} />
              <Fact
                label={live ? "Expected ready" : "Ready"}
                value={
                  live
                    ? `${etaText(batch.estimated_ready_at, batch.state, now)} (${formatDateTime(batch.estimated_ready_at)})`
                    : formatDateTime(batch.ready_at)
                }
              />
              <Fact label="Readable until" value={formatDateTime(batch.expires_at)} />
              <Fact label="Estimated cost" value={formatUsd(batch.cost_estimate_usd)} />
              <Fact label="Volume" value={formatBytes(batch.progress.bytes)} />
              <Fact label="Tiers" value={batch.tiers.map((t) => t.tier).join(", ") || "—"} />
            </dl>
            {batch.error ? <ErrorBanner error={batch.error} title="Some objects failed" /> : null}
            <BatchActions batch={batch} />
          </div>
        </Card>
        <Card
          title="Objects becoming ready"
          description="Objects readable over time since the batch was created."
        >
          {timeline.length ? (
            <ReadyChart
              createdAt={batch.created_at}
              points={timeline}
              total={batch.progress.objects}
              until={batch.ready_at ?? new Date().toISOString()}
            />
          ) : (
            <p className="muted">No object is readable yet.</p>
          )}
        </Card>
        <ItemsCard batch={batch} />
      </div>
    </>
  );
}

function BackLink({ scope }: { scope: Scope }) {
  return (
    <p className="print-hide">
      <Link to="/restores" search={{ scope }}>
        ← All restores
      </Link>
    </p>
  );
}

function Fact({ label, value }: { label: string; value: string }) {
  return (
    <div className="restore-fact">
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}

function BatchActions({ batch }: { batch: RestoreBatch }) {
  const retry = useRetryBatch();
  const upgrade = useUpgradeSpeed();
  const faster = fasterSpeeds<Speed>(batch.speed, SPEEDS);
  const [speed, setSpeed] = useState<Speed | "">("");
  const urls = exportUrls(batch.id);
  const readable = batch.progress.ready > 0;
  return (
    <div className="stack">
      {retry.error ? <ErrorBanner error={retry.error} title="Retry failed" /> : null}
      {upgrade.error ? <ErrorBanner error={upgrade.error} title="The speed was not changed" /> : null}
      <div className="row restore-actions">
        {batch.state === "in_progress" && faster.length ? (
          <>
            <Select
              label="Speed up to"
              value={speed}
              onChange={(e) => setSpeed(e.target.value as Speed | "")}
              options={[
                { value: "", label: "choose a faster speed" },
                ...faster.map((s) => ({ value: s, label: s })),
              ]}
            />
            <Button
              disabled={!speed}
              loading={upgrade.isPending}
              onClick={() =>
                speed && upgrade.mutate({ id: batch.id, speed }, { onSuccess: () => setSpeed("") })
              }
            >
              Speed up
            </Button>
          </>
        ) : null}
        {batch.progress.failed ? (
          <Button variant="primary" loading={retry.isPending} onClick={() => retry.mutate(batch.id)}>
            Retry {formatCount(batch.progress.failed)} failed
          </Button>
        ) : null}
      </div>
      <nav className="row restore-exports" aria-label="Download list">
        <span className="muted">Download list:</span>
        {readable ? (
          <>
            <a className="ui-button ui-button--secondary ui-button--sm" href={urls.csv}>
              CSV of keys
            </a>
            <a className="ui-button ui-button--secondary ui-button--sm" href={urls.tierpilot}>
              tierpilot cp script
            </a>
            <a className="ui-button ui-button--secondary ui-button--sm" href={urls.aws}>
              aws s3 cp script
            </a>
          </>
        ) : (
          <span className="muted">available once objects are ready</span>
        )}
      </nav>
    </div>
  );
}

function ReadyChart({
  createdAt,
  points,
  total,
  until,
}: {
  createdAt: string;
  points: Array<{ at: string; ready: number }>;
  total: number;
  /** The curve holds its last value until then (the batch's end, or now while it runs). */
  until: string;
}) {
  const rows = timelineRows(createdAt, points, until);
  const span = rows[rows.length - 1]?.t ?? 0;
  const minutes = span >= 180;
  const data = rows.map((r) => ({ x: minutes ? r.t / 60 : r.t, ready: r.ready }));
  return (
    <ChartFrame label={`Objects ready over ${minutes ? "minutes" : "seconds"} since creation`} height={240}>
      <LineChart data={data} margin={{ top: 8, right: 16, bottom: 20, left: 8 }}>
        <CartesianGrid stroke={GRID_STROKE} />
        <XAxis
          dataKey="x"
          type="number"
          domain={[0, (max: number) => Math.max(1, Math.ceil(max * 1.1))]}
          {...AXIS}
          tickFormatter={(v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1))}
          label={axisLabel(minutes ? "minutes since created" : "seconds since created", "bottom", -10)}
        />
        <YAxis {...AXIS} domain={[0, total]} allowDecimals={false} width={56} />
        <Tooltip
          formatter={(v) => [formatCount(Number(v)), "objects ready"]}
          labelFormatter={(v) => `after ${formatDuration(Number(v) * (minutes ? 60 : 1))}`}
        />
        <Line
          type="stepAfter"
          dataKey="ready"
          stroke="#2f6fde"
          strokeWidth={2}
          dot={false}
          isAnimationActive={false}
        />
      </LineChart>
    </ChartFrame>
  );
}

function ItemsCard({ batch }: { batch: RestoreBatch }) {
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
