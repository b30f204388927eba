import type { BenchmarkPoint, BenchmarkRun } from "@/api/benchmarks";

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

export type SizeSpec =
  | { object_sizes: number[]; size_distribution?: undefined }
  | { object_sizes?: undefined; size_distribution: { min: number; max: number } };

/** "1024,1048576" (one point per size) or "1024-1048576" (sizes drawn log-uniformly per object); null if neither. */
export function parseSizes(text: string): SizeSpec | null {
  const range = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(text);
  if (range) {
    const [min, max] = [Number(range[1]), Number(range[2])];
    return min >= 1 && max >= min ? { size_distribution: { min, max } } : null;
  }
  const list = parseList(text);
  return list ? { object_sizes: list } : null;
}

const MIXED_OPERATIONS = ["put", "get", "head", "list", "delete"];

/** "put=0.2,get=0.7,head=0.1": shares of the mixed workload's operations; null when malformed. */
export function parseRatios(text: string): Record<string, number> | null {
  const out: Record<string, number> = {};
  const parts = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const part of parts) {
    const [name, share] = part.split("=").map((s) => s.trim());
    const value = Number(share);
    if (!name || !MIXED_OPERATIONS.includes(name) || share === undefined || share === "" || !(value >= 0))
      return null;
    out[name] = value;
  }
  return Object.values(out).some((v) => v > 0) ? out : null;
}

/** Points grouped by object size (one chart panel each), each group ordered by concurrency. */
export function bySize(points: readonly BenchmarkPoint[]): Array<{ size: number; points: BenchmarkPoint[] }> {
  const groups = new Map<number, BenchmarkPoint[]>();
  for (const p of points) groups.set(p.object_size, [...(groups.get(p.object_size) ?? []), p]);
  return [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .map(([size, pts]) => ({ size, points: [...pts].sort((a, b) => a.concurrency - b.concurrency) }));
}

/** Rows for a stacked bar per point: one key per phase (median ms), the union of phases over the points. */
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

/** A run's sizes as asked: the list, or the range sizes were drawn from. */
export function runSizes(run: BenchmarkRun): string {
  const range = run.params.size_distribution as { min: number; max: number } | null | undefined;
  if (range) return `${formatSize(range.min)}–${formatSize(range.max)}`;
  return ((run.params.object_sizes as number[] | undefined) ?? []).map(formatSize).join(", ");
}
