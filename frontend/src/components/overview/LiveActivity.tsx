import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useEffect, useRef, useState } from "react";
import { type Activity, activityQueryOptions } from "@/api/requests";
import { Card, LoadingState, QueryState } from "@/components/ui";
import { formatCount, formatRate } from "@/lib/format";
import { GatewayCharts } from "./GatewayCharts";
import { type ActivityPoint, appendPoint, ratesBetween } from "./liveActivity";
import "./LiveActivity.css";

// A rate needs two readings: the second comes after a second, not after the usual five.
const FIRST_RATE_MS = 1_000;

function Figure({ label, value, detail }: { label: string; value: string | null; detail?: string }) {
  return (
    <div className="live-activity__figure">
      <p className="ui-stat__label">{label}</p>
      {value === null ? (
        <LoadingState label="Measuring" />
      ) : (
        <>
          <p className="ui-stat__value">{value}</p>
          {detail ? <p className="ui-stat__detail">{detail}</p> : null}
        </>
      )}
    </div>
  );
}

function GatewayFigures({
  gateway,
  last,
}: {
  gateway: NonNullable<Activity["gateway"]>;
  last?: ActivityPoint;
}) {
  const slow = last && last.slowdownsPerS > 0 ? ` (${last.slowdownsPerS.toFixed(2)} SlowDown)` : "";
  return (
    <>
      <Figure
        label="Requests/s"
        value={last ? last.requestsPerS.toFixed(1) : null}
        detail={
          last
            ? `${last.errorsPerS.toFixed(2)} errors/s${slow} · ${formatCount(gateway.in_flight)} in flight`
            : undefined
        }
      />
      <Figure
        label="Throughput"
        value={last ? formatRate(last.inMBps + last.outMBps) : null}
        detail={last ? `${formatRate(last.outMBps)} read · ${formatRate(last.inMBps)} written` : undefined}
      />
    </>
  );
}

function Reservations({ reservations }: { reservations: Activity["reservations"] }) {
  return (
    <div className="live-activity__figure">
      <p className="ui-stat__label">
        <Link to="/reservations">Reservations active now</Link>
      </p>
      <p className="ui-stat__value">{formatCount(reservations.length)}</p>
      {reservations.length ? (
        <ul className="live-activity__reservations" aria-label="Active reservations, achieved against booked">
          {reservations.map((r) => (
            <li key={`${r.bucket}-${r.direction}-${r.booked_bps}`}>
              {r.bucket} ({r.direction}):{" "}
              {r.achieved_bps === null || r.achieved_bps === undefined
                ? "no traffic yet"
                : formatRate(r.achieved_bps / 1e6)}{" "}
              achieved, {formatRate(r.booked_bps / 1e6)} booked
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** What is happening now: gateway rates and charts (admins) and the reservations in force. */
export function LiveActivity() {
  const [points, setPoints] = useState<ActivityPoint[]>([]);
  const query = useQuery({
    ...activityQueryOptions(),
    refetchInterval: points.length ? 5_000 : FIRST_RATE_MS,
  });
  const { data } = query;
  const previous = useRef<Activity | null>(null);

  useEffect(() => {
    if (!data) return;
    const prev = previous.current;
    previous.current = data;
    const point = prev ? ratesBetween(prev, data) : null;
    if (point) setPoints((p) => appendPoint(p, point));
  }, [data]);

  const last = points.at(-1);
  return (
    <Card title="Live activity" description="Readings every 5 s since this page opened.">
      <QueryState query={query} loading="Loading live activity">
        {(activity) => (
          <>
            <div className="live-activity__figures">
              {activity.gateway ? <GatewayFigures gateway={activity.gateway} last={last} /> : null}
              <Reservations reservations={activity.reservations} />
            </div>
            {activity.gateway && points.length > 1 ? <GatewayCharts points={points} /> : null}
          </>
        )}
      </QueryState>
    </Card>
  );
}
