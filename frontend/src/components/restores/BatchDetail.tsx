import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { batchQueryOptions, type Scope } from "@/api/restores";
import { Badge, Card, ErrorBanner, PageHeader, QueryState } from "@/components/ui";
import { formatBytes, formatDateTime } from "@/lib/format";
import { BatchActions } from "./BatchActions";
import { ItemsCard } from "./BatchItems";
import { ReadyChart } from "./ReadyChart";
import { BatchProgress, useNow } from "./RestoreQueue";
import { etaText, formatUsd, stateLabel, stateTone } from "./restore-format";
import "./restores.css";

export function BatchDetail({ id, scope }: { id: number; scope: Scope }) {
  const detail = useQuery(batchQueryOptions(id));
  const now = useNow();
  if (!detail.data) {
    return (
      <>
        <BackLink scope={scope} />
        <QueryState
          query={detail}
          loading="Loading the batch"
          errorTitle="This restore batch could not be loaded"
          retry={false}
        />
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
