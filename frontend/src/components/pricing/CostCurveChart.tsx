import { CartesianGrid, Legend, Line, LineChart, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import type { Report } from "@/api/pricing";
import { AXIS, axisLabel, ChartFrame, GRID_STROKE } from "@/components/ui";
import { curveRows, formatFrequency, formatUsd, logTicks, type Marker, markersInRange } from "./chart-data";

interface MarkerLabelProps {
  viewBox?: { x?: number; y?: number; height?: number };
  marker: Marker;
  index: number;
}

/** The break-even marker's label; its data attributes let tests and screen readers find the point. */
function MarkerLabel({ viewBox, marker, index }: MarkerLabelProps) {
  const x = viewBox?.x ?? 0;
  const y = (viewBox?.y ?? 0) + 12 + (index % 3) * 14;
  return (
    <g
      className="break-even-marker"
      data-testid="break-even-marker"
      data-reads-per-month={marker.readsPerMonth}
      data-pair={`${marker.cheaperBelow}|${marker.cheaperAbove}`}
    >
      <circle cx={x} cy={y - 4} r={3} fill="#111827" />
      <text x={x + 6} y={y} fontSize={11} fill="#111827">
        {formatFrequency(marker.readsPerMonth)}
      </text>
    </g>
  );
}

function CurveTooltip({
  active,
  payload,
  label,
}: {
  active?: boolean;
  payload?: Array<{ name?: string; value?: number; color?: string }>;
  label?: number;
}) {
  if (!active || !payload?.length) return null;
  const sorted = [...payload].sort((a, b) => (a.value ?? 0) - (b.value ?? 0));
  return (
    <div className="chart-tooltip">
      <strong>{formatFrequency(Number(label))} full reads / month</strong>
      {sorted.map((p) => (
        <div key={p.name}>
          <span style={{ color: p.color }}>●</span> {p.name}: {formatUsd(p.value ?? 0)} / month
        </div>
      ))}
    </div>
  );
}

/** Monthly cost against access frequency (log axis), one line per tier, break-even points marked. */
export function CostCurveChart({ report, colors }: { report: Report; colors: Map<string, string> }) {
  const rows = curveRows(report);
  const fs = report.sweep.reads_per_month;
  const min = fs[0] ?? 0.01;
  const max = fs[fs.length - 1] ?? 100;
  const markers = markersInRange(report, min, max);
  const tiers = report.tiers.map((t) => t.tier);
  // costs span orders of magnitude across frequencies: a log axis keeps the crossings readable
  const logCost = Object.values(report.sweep.totals).every((values) => values.every((v) => v > 0));
  return (
    <ChartFrame
      label={`Monthly cost in USD against full reads per month, from ${formatFrequency(min)} to ${formatFrequency(max)}`}
      height={360}
      bodyClassName="planner-chart"
      caption={
        markers.length
          ? `${markers.length} break-even point${markers.length > 1 ? "s" : ""} in this range (dashed lines).`
          : "No two tiers cost the same anywhere in this range."
      }
    >
      <LineChart data={rows} margin={{ top: 8, right: 24, bottom: 24, left: 8 }}>
        <CartesianGrid stroke={GRID_STROKE} />
        <XAxis
          dataKey="f"
          type="number"
          scale="log"
          domain={[min, max]}
          ticks={logTicks(min, max)}
          allowDataOverflow
          tickFormatter={(v: number) => formatFrequency(v)}
          label={axisLabel("full reads of the data set per month (log)", "bottom", -12)}
          {...AXIS}
        />
        <YAxis
          scale={logCost ? "log" : "auto"}
          domain={logCost ? ["auto", "auto"] : [0, "auto"]}
          allowDataOverflow={logCost}
          tickFormatter={(v: number) => formatUsd(v)}
          width={84}
          {...AXIS}
          label={axisLabel(logCost ? "USD per month (log)" : "USD per month", "left", 4)}
        />
        <Tooltip content={<CurveTooltip />} />
        <Legend verticalAlign="top" height={28} wrapperStyle={AXIS} />
        {tiers.map((tier) => (
          <Line
            key={tier}
            type="linear"
            dataKey={tier}
            name={tier}
            stroke={colors.get(tier)}
            dot={false}
            strokeWidth={2}
            isAnimationActive={false}
          />
        ))}
        {markers.map((m, i) => (
          <ReferenceLine
            key={`${m.cheaperBelow}|${m.cheaperAbove}|${m.readsPerMonth}`}
            x={m.readsPerMonth}
            stroke="#6b7280"
            strokeDasharray="4 3"
            label={(props: { viewBox?: MarkerLabelProps["viewBox"] }) => (
              <MarkerLabel viewBox={props.viewBox} marker={m} index={i} />
            )}
          />
        ))}
      </LineChart>
    </ChartFrame>
  );
}
