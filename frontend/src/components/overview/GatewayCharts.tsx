import { CartesianGrid, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import { AXIS, ChartFrame, GRID_STROKE } from "@/components/ui";
import type { ActivityPoint } from "./liveActivity";

// Wide enough for "1,234.5 MB/s": a tick must never be cut to its unit.
const Y_WIDTH = 88;

const clock = (t: number) => new Date(t * 1000).toLocaleTimeString();

/** A y tick: the number with its unit, one decimal below 10. */
export function tickWithUnit(unit: string) {
  return (v: number) => `${v.toLocaleString("en-US", { maximumFractionDigits: v < 10 ? 1 : 0 })} ${unit}`;
}

interface Series {
  key: keyof ActivityPoint;
  name: string;
  color: string;
}

function RateChart({
  points,
  label,
  unit,
  series,
}: {
  points: ActivityPoint[];
  label: string;
  unit: string;
  series: Series[];
}) {
  const tick = tickWithUnit(unit);
  return (
    <ChartFrame
      className="live-activity__chart"
      label={label}
      title={label}
      height={160}
      legend={series.map((s) => ({ label: s.name, color: s.color }))}
    >
      <LineChart data={points} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
        <CartesianGrid strokeDasharray="3 3" stroke={GRID_STROKE} />
        <XAxis {...AXIS} dataKey="t" tickFormatter={clock} minTickGap={40} />
        <YAxis {...AXIS} width={Y_WIDTH} tickFormatter={tick} allowDecimals />
        <Tooltip labelFormatter={(t) => clock(Number(t))} formatter={(v) => tick(Number(v))} />
        {series.map((s) => (
          <Line
            key={s.key}
            type="monotone"
            dataKey={s.key}
            name={s.name}
            stroke={s.color}
            dot={false}
            isAnimationActive={false}
          />
        ))}
      </LineChart>
    </ChartFrame>
  );
}

/** The gateway's throughput and request rate over the readings taken since the page opened. */
export function GatewayCharts({ points }: { points: ActivityPoint[] }) {
  return (
    <div className="live-activity__charts">
      <RateChart
        points={points}
        label="Gateway throughput"
        unit="MB/s"
        series={[
          { key: "outMBps", name: "read", color: "#2563eb" },
          { key: "inMBps", name: "written", color: "#7c3aed" },
        ]}
      />
      <RateChart
        points={points}
        label="Gateway requests"
        unit="req/s"
        series={[
          { key: "requestsPerS", name: "requests", color: "#0f766e" },
          { key: "errorsPerS", name: "errors", color: "#dc2626" },
        ]}
      />
    </div>
  );
}
