import { CartesianGrid, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import { AXIS, axisLabel, ChartFrame, GRID_STROKE } from "@/components/ui";
import { formatCount, formatDuration } from "@/lib/format";
import { timelineRows } from "./restore-format";

/** How many of a batch's objects were readable over time since it was created. */
export function ReadyChart({
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
