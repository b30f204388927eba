// Shapes the planner's report for the charts and tables.
import type { Breakdown, Report } from "@/api/pricing";
import { formatCount } from "@/lib/format";

export const COMPONENTS = [
  "storage",
  "requests",
  "retrieval",
  "restore",
  "restored_copy",
  "egress",
  "early_deletion",
  "monitoring",
  "fixed",
] as const;
export type Component = (typeof COMPONENTS)[number];

export const COMPONENT_LABELS: Record<Component, string> = {
  storage: "Storage",
  requests: "Requests",
  retrieval: "Retrieval",
  restore: "Restore",
  restored_copy: "Restored copy",
  egress: "Egress",
  early_deletion: "Early deletion",
  monitoring: "Monitoring",
  fixed: "Fixed",
};

export const COMPONENT_COLORS: Record<Component, string> = {
  storage: "#2563eb",
  requests: "#64748b",
  retrieval: "#f59e0b",
  restore: "#dc2626",
  restored_copy: "#f97316",
  egress: "#7c3aed",
  early_deletion: "#be185d",
  monitoring: "#0d9488",
  fixed: "#334155",
};

const PALETTE = [
  "#2563eb",
  "#dc2626",
  "#059669",
  "#d97706",
  "#7c3aed",
  "#0891b2",
  "#be185d",
  "#4d7c0f",
  "#9333ea",
  "#b45309",
  "#0f766e",
  "#1d4ed8",
  "#e11d48",
  "#65a30d",
  "#c2410c",
  "#4338ca",
];

/** A stable colour per tier label, in the order the tiers are listed. */
export function tierColors(labels: string[]): Map<string, string> {
  return new Map(labels.map((label, i) => [label, PALETTE[i % PALETTE.length] ?? "#4b5563"]));
}

/** A read frequency (full reads per month) with three significant digits. */
export function formatFrequency(value: number): string {
  if (!Number.isFinite(value)) return "—";
  if (value === 0) return "0";
  if (value >= 1000) return formatCount(Math.round(value));
  return String(Number(value.toPrecision(3)));
}

export type CurveRow = { f: number } & Record<string, number>;

/** One row per swept frequency with every tier's monthly total (USD). */
export function curveRows(report: Report): CurveRow[] {
  const { reads_per_month: fs, totals } = report.sweep;
  return fs.map((f, i) => {
    const row: CurveRow = { f } as CurveRow;
    for (const [tier, values] of Object.entries(totals)) row[tier] = values[i] ?? Number.NaN;
    return row;
  });
}

export interface Marker {
  readsPerMonth: number;
  cheaperBelow: string;
  cheaperAbove: string;
}

/** Break-even points inside the charted frequency range, lowest first. */
export function markersInRange(report: Report, min: number, max: number): Marker[] {
  return report.break_even
    .filter((b) => b.reads_per_month >= min && b.reads_per_month <= max)
    .map((b) => ({
      readsPerMonth: b.reads_per_month,
      cheaperBelow: b.cheaper_below,
      cheaperAbove: b.cheaper_above,
    }))
    .sort((a, b) => a.readsPerMonth - b.readsPerMonth);
}

export interface Rank {
  tier: string;
  /** Monthly total at the scenario's frequency (USD). */
  monthly: number;
  /** What it costs more than the cheapest, per month (USD). */
  more: number;
  /** The component that costs the most, or null when the tier costs nothing. */
  dominant: Component | null;
  /** Typical hours until a restored object can be read; null without a restore step. */
  restoreHours: number | null;
}

/** The options at the scenario's own frequency, cheapest first (ties by name, so the order is stable). */
export function ranking(report: Report): Rank[] {
  const sorted = [...report.tiers].sort(
    (a, b) => a.monthly.total - b.monthly.total || a.tier.localeCompare(b.tier),
  );
  const cheapest = sorted[0]?.monthly.total ?? 0;
  return sorted.map((t) => {
    const top = COMPONENTS.reduce<Component | null>(
      (best, c) => (t.monthly[c] > 0 && (best === null || t.monthly[c] > t.monthly[best]) ? c : best),
      null,
    );
    return {
      tier: t.tier,
      monthly: t.monthly.total,
      more: t.monthly.total - cheapest,
      dominant: top,
      restoreHours: t.restore_hours?.typical ?? null,
    };
  });
}

export interface RankedPair {
  cheaper: string;
  costlier: string;
  /** Where the two cost the same, lowest first; empty when one is cheaper at every frequency. */
  crossings: Marker[];
  /** Without a crossing: whether the two always cost the same. */
  equal: boolean;
}

const samePair = (x: string, y: string, a: string, b: string) => (x === a && y === b) || (x === b && y === a);

/** Each option against the next one down the ranking: where they cross, or that one is never dearer. With many
 * options this is the part of the break-even table that answers "why this order, and when would it change". */
export function adjacentPairs(report: Report, ranks: Rank[]): RankedPair[] {
  return ranks.slice(1).map((rank, i) => {
    const cheaper = ranks[i]?.tier ?? "";
    const crossings = markersInRange(report, 0, Number.POSITIVE_INFINITY).filter((m) =>
      samePair(m.cheaperBelow, m.cheaperAbove, cheaper, rank.tier),
    );
    const equal = report.dominance.some(
      (d) => d.equal && samePair(d.cheaper, d.costlier, cheaper, rank.tier),
    );
    return { cheaper, costlier: rank.tier, crossings, equal };
  });
}

/** Whether a break-even point lies between two neighbours of the ranking (the ones the chart labels). */
export function isRankedMarker(marker: Marker, pairs: RankedPair[]): boolean {
  return pairs.some((p) => samePair(marker.cheaperBelow, marker.cheaperAbove, p.cheaper, p.costlier));
}

/** Decade ticks (0.01, 0.1, 1, 10 …) covering [min, max] for a log axis. */
export function logTicks(min: number, max: number): number[] {
  const ticks: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e += 1) {
    const t = Number((10 ** e).toPrecision(1));
    if (t >= min && t <= max) ticks.push(t);
  }
  return ticks.length >= 2 ? ticks : [min, max];
}

export type BreakdownRow = { tier: string; total: number } & Record<Component, number>;

export function breakdownRows(report: Report, which: "monthly" | "total" = "monthly"): BreakdownRow[] {
  return report.tiers.map((t) => {
    const b: Breakdown = t[which];
    const row = { tier: t.tier, total: b.total } as BreakdownRow;
    for (const c of COMPONENTS) row[c] = b[c];
    return row;
  });
}

/** Components that cost something for at least one tier (the others would only clutter the chart). */
export function usedComponents(rows: BreakdownRow[]): Component[] {
  return COMPONENTS.filter((c) => rows.some((r) => r[c] > 0));
}
