import { useSuspenseQuery } from "@tanstack/react-query";
import { createFileRoute } from "@tanstack/react-router";
import { overviewQueryOptions } from "@/api/overview";
import { BucketsTable } from "@/components/overview/BucketsTable";
import { BucketVolumeChart } from "@/components/overview/BucketVolumeChart";
import { HealthSummary } from "@/components/overview/HealthSummary";
import { LiveActivity } from "@/components/overview/LiveActivity";
import { TierUsageList } from "@/components/overview/TierUsageList";
import { tierColorMap } from "@/components/overview/tier-colors";
import { WorkStats } from "@/components/overview/WorkStats";
import { TierHealthCount } from "@/components/settings/TiersSection";
import { Card, CopyButton, EmptyState, PageHeader } from "@/components/ui";
import { formatBytes, formatCount } from "@/lib/format";

export const Route = createFileRoute("/_app/")({
  loader: ({ context }) => context.queryClient.ensureQueryData(overviewQueryOptions()),
  component: OverviewPage,
});

function OverviewPage() {
  const { data } = useSuspenseQuery(overviewQueryOptions());
  const { user } = Route.useRouteContext();
  const colors = tierColorMap(data.tiers.map((t) => t.name));
  const capacity = data.tiers.reduce((sum, t) => sum + (t.capacity_bytes ?? 0), 0);
  return (
    <>
      <PageHeader
        title="Overview"
        description={
          user.is_admin
            ? "Money, work to look at, all tiers and every user's buckets."
            : "Money, work to look at, all tiers and the buckets you can open (yours and shared with you)."
        }
      />
      <WorkStats isAdmin={user.is_admin} />
      <div className="grid-stats">
        <div className="ui-card ui-stat">
          <p className="ui-stat__label">Stored</p>
          <p className="ui-stat__value">{formatBytes(data.totals.bytes)}</p>
          <p className="ui-stat__detail">
            {capacity > 0 ? `of ${formatBytes(capacity)} tier capacity` : "no tier capacity set"}
          </p>
        </div>
        <div className="ui-card ui-stat">
          <p className="ui-stat__label">Objects</p>
          <p className="ui-stat__value">{formatCount(data.totals.objects)}</p>
          <p className="ui-stat__detail">in {formatCount(data.totals.buckets)} buckets</p>
        </div>
        <div className="ui-card ui-stat">
          <p className="ui-stat__label">Tiers</p>
          <p className="ui-stat__value">{formatCount(data.tiers.length)}</p>
          <p className="ui-stat__detail">{data.tiers.filter((t) => t.offline).length} offline archive</p>
          {user.is_admin ? <TierHealthCount /> : null}
        </div>
        <div className="ui-card ui-stat">
          <p className="ui-stat__label">Health</p>
          <HealthSummary />
        </div>
      </div>

      <LiveActivity />

      <Card
        title="S3 gateway"
        description="Point any S3 client at this endpoint with the access key from Settings."
        className="gateway-card"
      >
        <div className="row">
          <code className="gateway-url">{data.gateway_url}</code>
          <CopyButton value={data.gateway_url} label="Copy URL" />
        </div>
      </Card>

      <div className="grid-2">
        <Card title="Tiers" description="Used volume against capacity (GiB = 2³⁰ bytes).">
          {data.tiers.length ? (
            <TierUsageList tiers={data.tiers} colors={colors} />
          ) : (
            <EmptyState title="No tiers" description="An admin adds tiers; the demo seed creates three." />
          )}
        </Card>
        <Card title="Largest buckets" description="Stored volume per bucket, coloured by tier.">
          {data.totals.bytes > 0 ? (
            <BucketVolumeChart buckets={data.buckets} colors={colors} />
          ) : (
            <EmptyState
              title="Nothing stored yet"
              description="Upload through the S3 gateway to see volumes here."
            />
          )}
        </Card>
      </div>

      <Card title="Buckets" padded={false}>
        <BucketsTable buckets={data.buckets} />
      </Card>
    </>
  );
}
