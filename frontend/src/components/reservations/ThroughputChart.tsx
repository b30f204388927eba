import { CartesianGrid, Line, LineChart, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import type { Throughput } from "@/api/reservations";
import { AXIS, axisLabel, ChartFrame, GRID_STROKE } from "@/components/ui";
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
    <ChartFrame
      label={`Achieved against booked throughput in MB/s, ${data.step_s} s per point`}
      height={260}
      legend={[
        { label: `achieved (${data.step_s} s per point)`, color: "var(--chart-1)", key: "achieved" },
        { label: "booked", color: "var(--chart-4)" },
      ]}
    >
      <LineChart data={rows} margin={{ top: 8, right: 24, bottom: 16, left: 8 }}>
        <CartesianGrid stroke={GRID_STROKE} />
        <XAxis
          dataKey="t"
          type="number"
          scale="time"
          domain={["dataMin", "dataMax"]}
          tickFormatter={(t: number) => timeFormat.format(t)}
          {...AXIS}
        />
        <YAxis {...AXIS} domain={[0, Math.ceil(top) || 1]} label={axisLabel("MB/s", "left")} />
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
    </ChartFrame>
  );
}
