import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { CartesianGrid, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import { type Activity, activityQueryOptions } from "@/api/requests";
import { Card, ChartFrame } from "@/components/ui";
import { formatCount, formatRate } from "@/lib/format";
import { type ActivityPoint, appendPoint, ratesBetween } from "./liveActivity";
import "./LiveActivity.css";

function Figure({ label, value, detail }: { label: string; value: string; detail?: string }) {
  return (
    <div className="live-activity__figure">
      <p className="ui-stat__label">{label}</p>
      <p className="ui-stat__value">{value}</p>
      {detail ? <p className="ui-stat__detail">{detail}</p> : null}
    </div>
  );
}

/** What is happening now: gateway rates (admins), restores in flight, lifecycle backlog, reservations. */
export function LiveActivity() {
  const { data } = useQuery(activityQueryOptions());
  const previous = useRef<Activity | null>(null);
  const [points, setPoints] = useState<ActivityPoint[]>([]);

  useEffect(() => {
    if (!data) return;
    const prev = previous.current;
    previous.current = data;
    const point = prev ? ratesBetween(prev, data) : null;
    if (point) setPoints((p) => appendPoint(p, point));
  }, [data]);

  if (!data) return null;
  const last = points.at(-1);
  return (
    <Card title="Live activity" description="Readings every 5 s since this page opened.">
      <div className="live-activity__figures">
        {data.gateway ? (
          <>
            <Figure
              label="Requests/s"
              value={last ? last.requestsPerS.toFixed(1) : "…"}
              detail={
                last
                  ? `${last.errorsPerS.toFixed(2)} errors/s${last.slowdownsPerS > 0 ? ` (${last.slowdownsPerS.toFixed(2)} SlowDown)` : ""} · ${formatCount(data.gateway.in_flight)} in flight`
                  : undefined
              }
            />
            <Figure
              label="Throughput"
              value={last ? `${formatRate(last.inMBps + last.outMBps)}` : "…"}
              detail={
                last ? `${formatRate(last.outMBps)} read · ${formatRate(last.inMBps)} written` : undefined
              }
            />
          </>
        ) : null}
        <Figure label="Restores in flight" value={formatCount(data.restores_in_flight)} />
        {data.lifecycle_backlog !== null && data.lifecycle_backlog !== undefined ? (
          <Figure
            label="Lifecycle backlog"
            value={formatCount(data.lifecycle_backlog)}
            detail="moves queued or running"
          />
        ) : null}
        <Figure label="Active reservations" value={formatCount(data.reservations.length)} />
      </div>
      {data.reservations.length ? (
        <ul className="live-activity__reservations" aria-label="Active reservations, achieved against booked">
          {data.reservations.map((r) => (
            <li key={`${r.bucket}-${r.direction}-${r.booked_bps}`}>
              {r.bucket} ({r.direction}):{" "}
              {r.achieved_bps === null || r.achieved_bps === undefined
                ? "no traffic yet"
                : formatRate(r.achieved_bps / 1e6)}{" "}
              of {formatRate(r.booked_bps / 1e6)} booked
            </li>
          ))}
        </ul>
      ) : null}
      {data.gateway && points.length > 1 ? (
        <ChartFrame
          as="img"
          className="live-activity__chart"
          label="Gateway throughput over the last minutes"
          height={160}
        >
          <LineChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis
              dataKey="t"
              tickFormatter={(t: number) => new Date(t * 1000).toLocaleTimeString()}
              minTickGap={40}
            />
            <YAxis width={48} unit=" MB/s" />
            <Tooltip labelFormatter={(t) => new Date(Number(t) * 1000).toLocaleTimeString()} />
            <Line
              type="monotone"
              dataKey="outMBps"
              name="read MB/s"
              stroke="#2563eb"
              dot={false}
              isAnimationActive={false}
            />
            <Line
              type="monotone"
              dataKey="inMBps"
              name="written MB/s"
              stroke="#7c3aed"
              dot={false}
              isAnimationActive={false}
            />
          </LineChart>
        </ChartFrame>
      ) : null}
    </Card>
  );
}
