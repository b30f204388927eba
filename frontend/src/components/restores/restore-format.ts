// Pure helpers of the Restores page: progress, ETA and money wording, kept testable apart from React.
import type { BadgeTone } from "@/components/ui";
import { formatDuration } from "@/lib/format";

export interface Progress {
  objects: number;
  ready: number;
  failed: number;
  bytes: number;
  ready_bytes: number;
}

/** Share of objects readable; a batch whose copies expired again counts them as done. */
export function readyShare(p: Progress): number {
  return p.objects > 0 ? Math.min(1, p.ready / p.objects) : 0;
}

const STATE_TONES: Record<string, BadgeTone> = {
  in_progress: "info",
  ready: "success",
  failed: "danger",
  expired: "neutral",
  pending: "neutral",
  ongoing: "info",
};

export function stateTone(state: string): BadgeTone {
  return STATE_TONES[state] ?? "neutral";
}

const STATE_LABELS: Record<string, string> = {
  in_progress: "in progress",
  ready: "ready",
  failed: "needs attention",
  expired: "expired",
  pending: "queued",
  ongoing: "restoring",
};

export function stateLabel(state: string): string {
  return STATE_LABELS[state] ?? state;
}

function parseUtc(iso: string): number {
  const hasZone = /(Z|[+-]\d\d:?\d\d)$/.test(iso);
  return new Date(hasZone ? iso : `${iso}Z`).getTime();
}

/** "in 25 s", "any moment now" or "—": time until a UTC instant, relative to `now` (ms). */
export function etaText(estimatedIso: string | null | undefined, state: string, now: number): string {
  if (state !== "in_progress") return "—";
  if (!estimatedIso) return "unknown";
  const seconds = (parseUtc(estimatedIso) - now) / 1000;
  if (seconds <= 0) return "any moment now";
  return `in ${formatDuration(seconds)}`;
}

/** US dollars from the API's decimal string, with cents, or more digits for sub-cent amounts. */
export function formatUsd(value: string | null | undefined): string {
  if (value == null) return "—";
  const n = Number(value);
  if (!Number.isFinite(n)) return "—";
  if (n === 0) return "$0.00";
  if (Math.abs(n) < 0.01) {
    // two significant digits without exponent notation or trailing zeros: 0.0000010 → $0.000001
    const decimals = Math.min(20, 1 - Math.floor(Math.log10(Math.abs(n))));
    return `$${n.toFixed(decimals).replace(/0+$/, "")}`;
  }
  return `$${n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

export interface TimelineRow {
  /** seconds since the batch was created */
  t: number;
  ready: number;
}

/**
 * The cumulative ready curve: 0 at creation, one step per moment objects became ready (objects ready
 * in the same poll are one step to their total, not a spike through 1, 2, …), held until `untilIso`.
 */
export function timelineRows(
  createdIso: string,
  points: Array<{ at: string; ready: number }>,
  untilIso?: string | null,
): TimelineRow[] {
  const start = parseUtc(createdIso);
  const rows: TimelineRow[] = [{ t: 0, ready: 0 }];
  for (const p of points) {
    const t = Math.max(0, (parseUtc(p.at) - start) / 1000);
    const last = rows[rows.length - 1] as TimelineRow;
    if (t <= last.t) last.ready = Math.max(last.ready, p.ready);
    else rows.push({ t, ready: Math.max(last.ready, p.ready) });
  }
  const last = rows[rows.length - 1] as TimelineRow;
  const until = untilIso ? (parseUtc(untilIso) - start) / 1000 : Number.NaN;
  if (until > last.t) rows.push({ t: until, ready: last.ready });
  return rows;
}

/** Speeds a running batch may move to: only faster ones. */
export function fasterSpeeds<S extends string>(current: S, all: readonly S[]): S[] {
  const index = all.indexOf(current);
  return index <= 0 ? [] : all.slice(0, index);
}
