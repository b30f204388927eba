// Chart rows of a lifecycle preview: one row per day, one value per target tier plus expirations.
import type { Preview } from "@/api/lifecycle";

export type Metric = "bytes" | "objects";
export const EXPIRED = "expired";

export interface ChartRow {
  date: string;
  [series: string]: number | string;
}

/** Target tiers that receive anything in the horizon, in order of first appearance. */
export function seriesOf(preview: Preview): string[] {
  const names: string[] = [];
  for (const day of preview.series) {
    for (const m of day.moves) if (!names.includes(m.tier)) names.push(m.tier);
  }
  return names;
}

export function chartRows(preview: Preview, metric: Metric): ChartRow[] {
  const tiers = seriesOf(preview);
  return preview.series.map((day) => {
    const row: ChartRow = { date: day.date };
    for (const t of tiers) row[t] = 0;
    for (const m of day.moves) row[m.tier] = (row[m.tier] as number) + m[metric];
    row[EXPIRED] = day.expirations[metric];
    return row;
  });
}

/** The largest stacked value of a day (for the axis unit). */
export function maxStack(rows: ChartRow[]): number {
  let max = 0;
  for (const row of rows) {
    let sum = 0;
    for (const [k, v] of Object.entries(row)) if (k !== "date" && typeof v === "number") sum += v;
    max = Math.max(max, sum);
  }
  return max;
}

/** Money from the API (decimal strings) for display: "$12.35 / month". */
export function usd(value: string | number, perMonth = false): string {
  const n = typeof value === "string" ? Number(value) : value;
  if (!Number.isFinite(n)) return "—";
  const text = n !== 0 && Math.abs(n) < 0.01 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`;
  return perMonth ? `${text} / month` : text;
}
