import type { Activity } from "@/api/requests";

export interface ActivityPoint {
  /** Seconds since the epoch of the later reading. */
  t: number;
  requestsPerS: number;
  errorsPerS: number;
  /** Of the errors, 503 SlowDown answers (backpressure). */
  slowdownsPerS: number;
  inMBps: number;
  outMBps: number;
}

/** Rates between two readings of the gateway counters; null when either has none or time did not move.
 * A counter that went down (a gateway process restarted) counts from zero. */
export function ratesBetween(prev: Activity, next: Activity): ActivityPoint | null {
  if (!prev.gateway || !next.gateway) return null;
  const seconds = (Date.parse(next.at) - Date.parse(prev.at)) / 1000;
  if (!(seconds > 0)) return null;
  const delta = (a: number, b: number) => (b >= a ? b - a : b);
  return {
    t: Date.parse(next.at) / 1000,
    requestsPerS: delta(prev.gateway.requests, next.gateway.requests) / seconds,
    errorsPerS: delta(prev.gateway.errors, next.gateway.errors) / seconds,
    slowdownsPerS: delta(prev.gateway.slowdowns, next.gateway.slowdowns) / seconds,
    inMBps: delta(prev.gateway.bytes_in, next.gateway.bytes_in) / seconds / 1e6,
    outMBps: delta(prev.gateway.bytes_out, next.gateway.bytes_out) / seconds / 1e6,
  };
}

/** The last `keep` points with one more appended. */
export function appendPoint(
  points: readonly ActivityPoint[],
  point: ActivityPoint,
  keep = 60,
): ActivityPoint[] {
  return [...points, point].slice(-keep);
}
