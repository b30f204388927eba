import { useState } from "react";
import { Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis } from "recharts";
import type { Preview } from "@/api/lifecycle";
import { tierColorMap } from "@/components/overview/tier-colors";
import { AXIS, axisLabel, ChartFrame, GRID_STROKE, Stat } from "@/components/ui";
import { chartByteUnit, formatBytes, formatCount } from "@/lib/format";
import { chartRows, EXPIRED, type Metric, maxStack, seriesOf, usd } from "./preview-chart-data";
import "./lifecycle.css";

const dayFormat = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });
const EXPIRED_COLOR = "#9ca3af";

function day(iso: string): string {
  return dayFormat.format(new Date(`${iso}T00:00:00Z`));
}

/** Bytes or objects that move (per target tier) or expire each day of the horizon, stacked. */
export function PreviewChart({ preview, tiers }: { preview: Preview; tiers: string[] }) {
  const [metric, setMetric] = useState<Metric>("bytes");
  const rows = chartRows(preview, metric);
  const series = seriesOf(preview);
  const colors = tierColorMap(tiers);
  const unit = metric === "bytes" ? chartByteUnit(maxStack(rows)) : { divisor: 1, label: "objects" };
  const scaled = rows.map((r) => {
    const out: Record<string, number | string> = { date: r.date };
    for (const [k, v] of Object.entries(r)) if (k !== "date") out[k] = Number(v) / unit.divisor;
    return out;
  });
  const nothing = series.length === 0 && preview.totals.expirations.objects === 0;
  return (
    <ChartFrame
      label={`${metric === "bytes" ? "Bytes" : "Objects"} moving or expiring per day over the next ${preview.days} days, per target tier`}
      className="lc-chart"
      testId="lifecycle-preview-chart"
      height={260}
      controls={
        <div className="lc-chart__controls" role="radiogroup" aria-label="Show">
          {(["bytes", "objects"] as const).map((m) => (
            <label key={m} className="lc-chart__toggle">
              <input type="radio" name="lc-metric" checked={metric === m} onChange={() => setMetric(m)} />
              {m === "bytes" ? "Volume (GiB = 2³⁰ B)" : "Objects"}
            </label>
          ))}
        </div>
      }
      placeholder={
        nothing ? (
          <p className="muted lc-chart__empty">Nothing moves or expires in the next {preview.days} days.</p>
        ) : undefined
      }
      legend={[
        ...series.map((tier) => ({ label: `to ${tier}`, color: colors.get(tier) ?? "" })),
        { label: "expired", color: EXPIRED_COLOR },
      ]}
    >
      <BarChart data={scaled} margin={{ top: 8, right: 16, bottom: 16, left: 8 }}>
        <CartesianGrid stroke={GRID_STROKE} vertical={false} />
        <XAxis {...AXIS} dataKey="date" tickFormatter={day} minTickGap={24} />
        <YAxis {...AXIS} allowDecimals={metric === "bytes"} label={axisLabel(unit.label, "left")} />
        <Tooltip
          labelFormatter={(d) => day(String(d))}
          formatter={(v, name) => {
            const n = Number(v) * unit.divisor;
            return [metric === "bytes" ? formatBytes(n) : formatCount(n), String(name)];
          }}
        />
        {series.map((tier) => (
          <Bar
            key={tier}
            dataKey={tier}
            name={`to ${tier}`}
            stackId="day"
            fill={colors.get(tier) ?? "#2563eb"}
            isAnimationActive={false}
          />
        ))}
        <Bar dataKey={EXPIRED} name="expired" stackId="day" fill={EXPIRED_COLOR} isAnimationActive={false} />
      </BarChart>
    </ChartFrame>
  );
}

/** Totals of a preview and the monthly storage cost before and after it. */
export function PreviewSummary({ preview }: { preview: Preview }) {
  const moved = preview.totals.moves;
  const movedObjects = moved.reduce((n, m) => n + m.objects, 0);
  const movedBytes = moved.reduce((n, m) => n + m.bytes, 0);
  const before = Number(preview.cost.before_usd_month);
  const after = Number(preview.cost.after_usd_month);
  const change = before > 0 ? (after - before) / before : 0;
  return (
    <div data-testid="lifecycle-preview-summary">
      <div className="grid-stats lc-stats">
        <Stat
          label={`Moves in ${preview.days} days`}
          value={formatCount(movedObjects)}
          detail={`${formatBytes(movedBytes)}${moved.length ? ` to ${moved.map((m) => m.tier).join(", ")}` : ""}`}
        />
        <Stat
          label="Expires"
          value={formatCount(preview.totals.expirations.objects)}
          detail={formatBytes(preview.totals.expirations.bytes)}
        />
        <Stat label="Storage now" value={usd(before)} detail="per month (USD)" />
        <Stat
          label={`Storage after ${preview.days} days`}
          value={usd(after)}
          detail={
            before > 0
              ? `per month, ${change <= 0 ? "" : "+"}${(change * 100).toFixed(1)} %`
              : "per month (USD)"
          }
        />
      </div>
      <p className="muted lc-fees">
        One-off: transition requests {usd(preview.cost.transition_requests_usd)}, early-deletion charges{" "}
        {usd(preview.cost.early_deletion_usd)}.
        {preview.unpriced_tiers.length ? ` Not priced: ${preview.unpriced_tiers.join(", ")}.` : ""}
        {preview.truncated
          ? ` Only the first ${formatCount(preview.objects_walked)} objects were walked.`
          : ""}
      </p>
    </div>
  );
}
