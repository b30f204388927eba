import type { SweepSchedule } from "@/api/lifecycle";

/** What the page says about beat's sweeps: when the last started and when the next is due. */
export type SweepTimes =
  | { kind: "unknown" }
  | { kind: "upcoming"; last: string; next: string }
  | { kind: "late"; last: string; next: string };

/** A sweep starts when a worker takes beat's message: a busy worker may start it this much after it was due. */
export const LATE_AFTER_MS = 60_000;

export function sweepTimes(schedule: SweepSchedule, now: Date): SweepTimes {
  const { last_run_at: last, next_run_at: next } = schedule;
  if (!last || !next) return { kind: "unknown" };
  const late = now.getTime() > new Date(next).getTime() + LATE_AFTER_MS;
  return { kind: late ? "late" : "upcoming", last, next };
}
