import { CartesianGrid, Legend, Line, LineChart, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import type { Report } from "@/api/pricing";
import { AXIS, axisLabel, ChartFrame, GRID_STROKE } from "@/components/ui";
import { formatMoney } from "@/lib/format";
import {
  adjacentPairs,
  curveRows,
  formatFrequency,
  isRankedMarker,
  logTicks,
  type Marker,
  markersInRange,
  ranking,
} from "./chart-data";

interface MarkerLabelProps {
  viewBox?: { x?: number; y?: number; height?: number };
  marker: Marker;
  /** Position among the labelled markers, to stagger their labels; null: not labelled. */
  index: number | null;
}

const markerText = (m: Marker) =>
  `${m.cheaperBelow} is cheaper than ${m.cheaperAbove} below ${formatFrequency(m.readsPerMonth)} full reads a month`;

/** The break-even marker; its data attributes let tests and screen readers find the point. Only crossings of
 * neighbours in the ranking carry a label: with many options the others would pile up, so they say what they are
 * on hover. */
function MarkerLabel({ viewBox, marker, index }: MarkerLabelProps) {
  const x = viewBox?.x ?? 0;
  const y = (viewBox?.y ?? 0) + 12 + ((index ?? 0) % 3) * 14;
  return (
    <g
      className="break-even-marker"
      data-testid="break-even-marker"
      data-reads-per-month={marker.readsPerMonth}
      data-pair={`${marker.cheaperBelow}|${marker.cheaperAbove}`}
      data-labelled={index !== null}
    >
      <title>{markerText(marker)}</title>
      <circle
        cx={x}
        cy={index !== null ? y - 4 : (viewBox?.y ?? 0) + 4}
        r={index !== null ? 3 : 2}
        fill="#111827"
      />
      {index !== null ? (
        <text x={x + 6} y={y} fontSize={11} fill="#111827">
          {formatFrequency(marker.readsPerMonth)}
        </text>
      ) : null}
    </g>
  );
}

/** How close (as a factor on the log axis) a hovered frequency must be to an unlabelled crossing to name it. */
const NEAR = 1.25;

function CurveTooltip({
  active,
  payload,
  label,
  unlabelled = [],
}: {
  active?: boolean;
  payload?: Array<{ name?: string; value?: number; color?: string }>;
  label?: number;
  unlabelled?: Marker[];
}) {
  if (!active || !payload?.length) return null;
  const sorted = [...payload].sort((a, b) => (a.value ?? 0) - (b.value ?? 0));
  const f = Number(label);
  const near = unlabelled.filter((m) => m.readsPerMonth <= f * NEAR && m.readsPerMonth >= f / NEAR);
  return (
    <div className="chart-tooltip">
      <strong>{formatFrequency(f)} full reads / month</strong>
      {sorted.map((p) => (
        <div key={p.name}>
          <span style={{ color: p.color }}>●</span> {p.name}: {formatMoney(p.value ?? 0)} / month
        </div>
      ))}
      {near.map((m) => (
        <div key={`${m.cheaperBelow}|${m.cheaperAbove}|${m.readsPerMonth}`} className="muted">
          {markerText(m)}
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
  const pairs = adjacentPairs(report, ranking(report));
  const labelled = markers.filter((m) => isRankedMarker(m, pairs));
  const unlabelled = markers.filter((m) => !isRankedMarker(m, pairs));
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
          ? `${markers.length} break-even point${markers.length > 1 ? "s" : ""} in this range (dashed lines); ` +
            (unlabelled.length
              ? `the ${labelled.length} between neighbours in the ranking are labelled, the others named on hover.`
              : "each is labelled.")
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
          tickFormatter={(v: number) => formatMoney(v)}
          width={84}
          {...AXIS}
          label={axisLabel(logCost ? "USD per month (log)" : "USD per month", "left", 4)}
        />
        <Tooltip content={<CurveTooltip unlabelled={unlabelled} />} />
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
        {markers.map((m) => {
          const index = labelled.indexOf(m);
          return (
            <ReferenceLine
              key={`${m.cheaperBelow}|${m.cheaperAbove}|${m.readsPerMonth}`}
              x={m.readsPerMonth}
              stroke={index >= 0 ? "#6b7280" : "#d1d5db"}
              strokeDasharray="4 3"
              label={(props: { viewBox?: MarkerLabelProps["viewBox"] }) => (
                <MarkerLabel viewBox={props.viewBox} marker={m} index={index >= 0 ? index : null} />
              )}
            />
          );
        })}
      </LineChart>
    </ChartFrame>
  );
}
