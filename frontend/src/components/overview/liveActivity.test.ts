import { describe, expect, it } from "vitest";
import type { Activity } from "@/api/requests";
import { appendPoint, ratesBetween } from "./liveActivity";

function reading(at: string, requests: number, bytesOut: number, slowdowns = 0): Activity {
  return {
    at,
    gateway: { requests, errors: slowdowns, slowdowns, bytes_in: 0, bytes_out: bytesOut, in_flight: 1 },
    restores_in_flight: 0,
    lifecycle_backlog: 0,
    reservations: [],
  };
}

describe("ratesBetween", () => {
  it("divides counter growth by the time between readings", () => {
    const point = ratesBetween(
      reading("2026-11-25T00:00:00Z", 100, 0),
      reading("2026-11-25T00:00:05Z", 150, 50e6),
    );
    expect(point?.requestsPerS).toBe(10);
    expect(point?.outMBps).toBe(10);
  });

  it("tells SlowDown answers apart from the other errors", () => {
    const point = ratesBetween(
      reading("2026-11-25T00:00:00Z", 100, 0, 4),
      reading("2026-11-25T00:00:02Z", 150, 0, 10),
    );
    expect(point?.errorsPerS).toBe(3);
    expect(point?.slowdownsPerS).toBe(3);
  });

  it("counts from zero after a gateway restart and gives nothing without counters", () => {
    const point = ratesBetween(
      reading("2026-11-25T00:00:00Z", 100, 0),
      reading("2026-11-25T00:00:10Z", 20, 0),
    );
    expect(point?.requestsPerS).toBe(2);
    expect(
      ratesBetween(
        { ...reading("2026-11-25T00:00:00Z", 1, 0), gateway: null },
        reading("2026-11-25T00:00:05Z", 2, 0),
      ),
    ).toBeNull();
  });
});

describe("appendPoint", () => {
  it("keeps the newest points", () => {
    const p = { t: 0, requestsPerS: 0, errorsPerS: 0, slowdownsPerS: 0, inMBps: 0, outMBps: 0 };
    expect(appendPoint([p, p, p], { ...p, t: 9 }, 2).map((x) => x.t)).toEqual([0, 9]);
  });
});
