import type { BenchmarkPoint } from "@/api/benchmarks";

/** Comma-separated whole numbers of at least 1, or null when any is not. */
export function parseList(text: string): number[] | null {
  const parts = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!parts.length) return null;
  const values = parts.map((p) => Number(p));
  return values.every((v) => Number.isInteger(v) && v >= 1) ? values : null;
}

/** Points grouped by object size (one chart panel each), each group ordered by concurrency. */
export function bySize(points: readonly BenchmarkPoint[]): Array<{ size: number; points: BenchmarkPoint[] }> {
  const groups = new Map<number, BenchmarkPoint[]>();
  for (const p of points) groups.set(p.object_size, [...(groups.get(p.object_size) ?? []), p]);
  return [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .map(([size, pts]) => ({ size, points: [...pts].sort((a, b) => a.concurrency - b.concurrency) }));
}

/** Rows for a stacked bar per point: one key per phase (mean ms), the union of phases over the points. */
export function phaseRows(points: readonly BenchmarkPoint[]): {
  rows: Array<Record<string, number | string>>;
  phases: string[];
} {
  const phases = [...new Set(points.flatMap((p) => Object.keys(p.phases_ms)))];
  const rows = points.map((p) => ({ label: `${p.concurrency}`, ...p.phases_ms }));
  return { rows, phases };
}

/** Points of two runs side by side by concurrency (throughput of each), for the overlay. */
export function overlay(
  a: readonly BenchmarkPoint[],
  b: readonly BenchmarkPoint[],
): Array<{ concurrency: number; a?: number; b?: number }> {
  const rows = new Map<number, { concurrency: number; a?: number; b?: number }>();
  for (const p of a)
    rows.set(p.concurrency, {
      ...(rows.get(p.concurrency) ?? { concurrency: p.concurrency }),
      a: p.ops_per_s,
    });
  for (const p of b)
    rows.set(p.concurrency, {
      ...(rows.get(p.concurrency) ?? { concurrency: p.concurrency }),
      b: p.ops_per_s,
    });
  return [...rows.values()].sort((x, y) => x.concurrency - y.concurrency);
}

export function formatSize(bytes: number): string {
  if (bytes >= 1 << 20) return `${bytes / (1 << 20)} MiB`;
  if (bytes >= 1 << 10) return `${bytes / (1 << 10)} KiB`;
  return `${bytes} B`;
}
