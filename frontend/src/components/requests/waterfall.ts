import type { RequestPhase } from "@/api/requests";

export interface WaterfallBar {
  name: string;
  /** Left edge and width as percentages of the request's total time. */
  left: number;
  width: number;
  durationMs: number;
  share: number;
}

/** Bars of a request's phases on one time axis (0 … total), each at least a hairline wide. */
export function waterfallBars(phases: readonly RequestPhase[], totalMs: number): WaterfallBar[] {
  const total = totalMs > 0 ? totalMs : phases.reduce((sum, p) => sum + p.duration_ms, 0) || 1;
  return phases.map((p) => ({
    name: p.name,
    left: Math.min(100, (p.start_ms / total) * 100),
    width: Math.max(0.3, Math.min(100, (p.duration_ms / total) * 100)),
    durationMs: p.duration_ms,
    share: p.duration_ms / total,
  }));
}

/** The phase that took longest (where to look first), or null without phases. */
export function slowestPhase(phases: readonly RequestPhase[]): RequestPhase | null {
  return phases.reduce<RequestPhase | null>(
    (best, p) => (best && best.duration_ms >= p.duration_ms ? best : p),
    null,
  );
}

export function formatMs(ms: number): string {
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(2)} ms`;
}
