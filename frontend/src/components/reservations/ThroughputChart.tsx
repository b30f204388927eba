import {
  CartesianGrid,
  Line,
  LineChart,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import type { Throughput } from "@/api/reservations";
import { formatRate } from "./timeline";

const timeFormat = new Intl.DateTimeFormat(undefined, {
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
});

/** Achieved throughput (gateway metering) against the booked rate. */
export function ThroughputChart({ data }: { data: Throughput }) {
  const rows = data.points.map((p) => ({ t: Date.parse(p.at), achieved: p.achieved_mbps }));
  const top = Math.max(data.booked_mbps, ...rows.map((r) => r.achieved)) * 1.15;
  return (
    <figure
      className="chart"
      aria-label={`Achieved against booked throughput in MB/s, ${data.step_s} s per point`}
    >
      <div style={{ width: "100%", height: 260 }}>
        <ResponsiveContainer>
          <LineChart data={rows} margin={{ top: 8, right: 24, bottom: 16, left: 8 }}>
            <CartesianGrid stroke="#e5e9f0" />
            <XAxis
              dataKey="t"
              type="number"
              scale="time"
              domain={["dataMin", "dataMax"]}
              tickFormatter={(t: number) => timeFormat.format(t)}
              fontSize={12}
            />
            <YAxis
              domain={[0, Math.ceil(top) || 1]}
              fontSize={12}
              label={{ value: "MB/s", angle: -90, position: "insideLeft", fontSize: 12 }}
            />
            <Tooltip
              labelFormatter={(t) => timeFormat.format(Number(t))}
              formatter={(v) => [formatRate(Number(v)), "achieved"]}
            />
            <ReferenceLine
              y={data.booked_mbps}
              stroke="var(--chart-4)"
              strokeDasharray="6 4"
              label={{
                value: `booked ${formatRate(data.booked_mbps)}`,
                position: "insideTopRight",
                fontSize: 12,
              }}
            />
            <Line
              type="stepAfter"
              dataKey="achieved"
              name="achieved"
              stroke="var(--chart-1)"
              dot={false}
              strokeWidth={2}
              isAnimationActive={false}
            />
          </LineChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="chart-legend">
        <span className="chart-legend__item">
          <span
            className="chart-legend__swatch"
            style={{ background: "var(--chart-1)" }}
            aria-hidden="true"
          />
          achieved ({data.step_s} s per point)
        </span>
        <span className="chart-legend__item">
          <span
            className="chart-legend__swatch"
            style={{ background: "var(--chart-4)" }}
            aria-hidden="true"
          />
          booked
        </span>
      </figcaption>
    </figure>
  );
}
