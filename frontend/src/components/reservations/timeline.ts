// Pure pieces of the Reservations page: time spans, the booked-load step function, lanes for
// the Gantt bars, datetime-local conversions. Rates in MB/s (10^6 bytes/s), times as epoch ms.

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export interface Zoom {
  id: string;
  label: string;
  span: number;
  /** Clicked times snap to this grid; also the default booking length from a click. */
  slot: number;
  tick: number;
}

export const ZOOMS: readonly Zoom[] = [
  { id: "6h", label: "6 hours", span: 6 * HOUR, slot: 15 * 60_000, tick: HOUR },
  { id: "1d", label: "1 day", span: DAY, slot: HOUR, tick: 3 * HOUR },
  { id: "3d", label: "3 days", span: 3 * DAY, slot: 2 * HOUR, tick: 12 * HOUR },
  { id: "1w", label: "1 week", span: 7 * DAY, slot: 6 * HOUR, tick: DAY },
  { id: "2w", label: "2 weeks", span: 14 * DAY, slot: 12 * HOUR, tick: 2 * DAY },
];

export function zoomById(id: string): Zoom {
  return ZOOMS.find((z) => z.id === id) ?? (ZOOMS[1] as Zoom);
}

/** The first visible instant for a zoom: a little before now, on the tick grid (local time). */
export function viewStart(now: number, zoom: Zoom): number {
  const lead = zoom.span / 12;
  return floorLocal(now - lead, zoom.tick);
}

/** ``t`` rounded down to a multiple of ``step`` counted from local midnight. */
export function floorLocal(t: number, step: number): number {
  const d = new Date(t);
  const midnight = new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  return midnight + Math.floor((t - midnight) / step) * step;
}

export interface LoadStep {
  at: number;
  mbps: number;
}

export function parseSteps(steps: Array<{ at: string; booked_mbps: number }>): LoadStep[] {
  return steps.map((s) => ({ at: Date.parse(s.at), mbps: s.booked_mbps }));
}

/** The booked load at ``t`` (steps sorted, each valid until the next). */
export function loadAt(steps: readonly LoadStep[], t: number): number {
  let load = 0;
  for (const s of steps) {
    if (s.at > t) break;
    load = s.mbps;
  }
  return load;
}

/** The highest booked load anywhere in [start, end). */
export function peakLoad(steps: readonly LoadStep[], start: number, end: number): number {
  let peak = loadAt(steps, start);
  for (const s of steps) {
    if (s.at > start && s.at < end) peak = Math.max(peak, s.mbps);
  }
  return peak;
}

/** The SVG path of a step function from x(start) to x(end), closed down to the baseline. */
export function stepAreaPath(
  steps: readonly LoadStep[],
  start: number,
  end: number,
  x: (t: number) => number,
  y: (mbps: number) => number,
): string {
  const base = y(0);
  let d = `M${x(start).toFixed(1)},${base.toFixed(1)}`;
  let level = loadAt(steps, start);
  d += ` V${y(level).toFixed(1)}`;
  for (const s of steps) {
    if (s.at <= start || s.at >= end) continue;
    d += ` H${x(s.at).toFixed(1)} V${y(s.mbps).toFixed(1)}`;
    level = s.mbps;
  }
  d += ` H${x(end).toFixed(1)} V${base.toFixed(1)} Z`;
  return d;
}

export interface Interval {
  start: number;
  end: number;
}

/** Lanes for Gantt bars so overlapping windows never share a row (greedy by start time). */
export function assignLanes<T extends Interval>(items: readonly T[]): Array<{ item: T; lane: number }> {
  const sorted = [...items].sort((a, b) => a.start - b.start || a.end - b.end);
  const laneEnds: number[] = [];
  return sorted.map((item) => {
    let lane = laneEnds.findIndex((end) => end <= item.start);
    if (lane === -1) {
      lane = laneEnds.length;
      laneEnds.push(item.end);
    } else {
      laneEnds[lane] = item.end;
    }
    return { item, lane };
  });
}

/** Tick positions of a span on the local grid of ``step``. */
export function ticks(start: number, end: number, step: number): number[] {
  const out: number[] = [];
  for (let t = floorLocal(start, step); t <= end; t += step) {
    if (t >= start) out.push(t);
  }
  return out;
}

/** Average advance of an 11 px label character, generous so estimates err towards fewer labels. */
const TICK_CHAR_PX = 6.6;

/**
 * How many ticks one label spans: 1 labels every tick, 3 every third one. Labels `label`-long at
 * `pxPerTick` spacing would otherwise run together on a narrow screen ("03:00 PM06:00 PM").
 */
export function labelEvery(pxPerTick: number, label: string, gapPx = 10): number {
  const labelPx = label.length * TICK_CHAR_PX + gapPx;
  return Math.max(1, Math.ceil(labelPx / Math.max(1, pxPerTick)));
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** A Date as the value of an <input type="datetime-local"> (local time, minutes). */
export function toLocalInput(t: number): string {
  const d = new Date(t);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The instant a datetime-local value means in the browser's zone, or NaN. */
export function fromLocalInput(value: string): number {
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(value)) return Number.NaN;
  return new Date(value).getTime();
}

/** Rates are formatted in one place for the whole app. */
export { formatRate } from "@/lib/format";
