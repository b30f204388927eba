import { Bar, BarChart, CartesianGrid, Cell, Tooltip, XAxis, YAxis } from "recharts";
import type { BucketUsage } from "@/api/overview";
import { AXIS, axisLabel, ChartFrame, GRID_STROKE } from "@/components/ui";
import { chartByteUnit, formatBytes, formatCount } from "@/lib/format";

const MAX_BARS = 10;

interface Row {
  name: string;
  tier: string;
  value: number;
  bytes: number;
  objects: number;
}

function ChartTooltip({ active, payload }: { active?: boolean; payload?: Array<{ payload: Row }> }) {
  const row = active ? payload?.[0]?.payload : undefined;
  if (!row) return null;
  return (
    <div className="chart-tooltip">
      <strong>{row.name}</strong>
      <div>tier {row.tier}</div>
      <div>
        {formatBytes(row.bytes)} · {formatCount(row.objects)} objects
      </div>
    </div>
  );
}

/** The largest buckets by stored volume, each bar in its tier's colour; the unit follows the data. */
export function BucketVolumeChart({
  buckets,
  colors,
}: {
  buckets: BucketUsage[];
  colors: Map<string, string>;
}) {
  const largest = [...buckets].sort((a, b) => b.used_bytes - a.used_bytes).slice(0, MAX_BARS);
  const unit = chartByteUnit(largest[0]?.used_bytes ?? 0);
  const rows: Row[] = largest.map((b) => ({
    name: b.name,
    tier: b.tier,
    value: b.used_bytes / unit.divisor,
    bytes: b.used_bytes,
    objects: b.object_count,
  }));
  const height = Math.max(160, rows.length * 36 + 48);
  const tiersShown = [...new Set(rows.map((r) => r.tier))];
  return (
    <ChartFrame
      label={`Stored volume per bucket in ${unit.label}`}
      height={height}
      legend={tiersShown.map((t) => ({ label: t, color: colors.get(t) ?? "" }))}
      caption={
        buckets.length > MAX_BARS ? (
          <span className="muted">
            largest {MAX_BARS} of {buckets.length}
          </span>
        ) : null
      }
    >
      <BarChart data={rows} layout="vertical" margin={{ top: 4, right: 16, bottom: 16, left: 8 }}>
        <CartesianGrid horizontal={false} stroke={GRID_STROKE} />
        <XAxis
          {...AXIS}
          type="number"
          tickFormatter={(v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1))}
          label={axisLabel(`${unit.label} stored`, "bottom", -8)}
        />
        <YAxis {...AXIS} type="category" dataKey="name" width={120} interval={0} />
        <Tooltip content={<ChartTooltip />} cursor={{ fill: "rgba(37, 99, 235, 0.06)" }} />
        <Bar dataKey="value" name={`${unit.label} stored`} radius={[0, 4, 4, 0]} isAnimationActive={false}>
          {rows.map((r) => (
            <Cell key={r.name} fill={colors.get(r.tier) ?? "#4b5563"} />
          ))}
        </Bar>
      </BarChart>
    </ChartFrame>
  );
}
