import { describe, expect, it } from "vitest";
import { sweepRefetchMs } from "@/api/lifecycle";
import { sweepTimes } from "./sweep-times";

const schedule = {
  period_s: 300,
  last_run_at: "2026-11-25T10:00:00Z",
  next_run_at: "2026-11-25T10:05:00Z",
};

describe("sweepTimes", () => {
  it("is unknown before beat's first sweep", () => {
    const none = { period_s: 300, last_run_at: null, next_run_at: null };
    expect(sweepTimes(none, new Date("2026-11-25T10:01:00Z"))).toEqual({ kind: "unknown" });
  });

  it("is upcoming until a minute past the due time (a busy worker starts it late), late after", () => {
    expect(sweepTimes(schedule, new Date("2026-11-25T10:04:59Z")).kind).toBe("upcoming");
    expect(sweepTimes(schedule, new Date("2026-11-25T10:06:00Z")).kind).toBe("upcoming");
    expect(sweepTimes(schedule, new Date("2026-11-25T10:06:01Z"))).toEqual({
      kind: "late",
      last: schedule.last_run_at,
      next: schedule.next_run_at,
    });
  });
});

describe("sweepRefetchMs", () => {
  it("asks again just after the next sweep is due", () => {
    expect(sweepRefetchMs(schedule, new Date("2026-11-25T10:04:00Z"))).toBe(65_000);
  });

  it("polls every half minute while unknown or late", () => {
    expect(sweepRefetchMs(undefined, new Date())).toBe(30_000);
    expect(sweepRefetchMs(schedule, new Date("2026-11-25T10:06:00Z"))).toBe(30_000);
  });
});
