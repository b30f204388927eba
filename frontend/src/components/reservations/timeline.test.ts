import { describe, expect, it } from "vitest";
import {
  assignLanes,
  floorLocal,
  formatRate,
  fromLocalInput,
  HOUR,
  labelEvery,
  loadAt,
  peakLoad,
  stepAreaPath,
  ticks,
  toLocalInput,
  viewStart,
  zoomById,
} from "./timeline";

const steps = [
  { at: 0, mbps: 0 },
  { at: 10, mbps: 100 },
  { at: 20, mbps: 150 },
  { at: 30, mbps: 50 },
  { at: 40, mbps: 0 },
];

describe("booked load", () => {
  it("holds each step until the next", () => {
    expect(loadAt(steps, 5)).toBe(0);
    expect(loadAt(steps, 10)).toBe(100);
    expect(loadAt(steps, 29.9)).toBe(150);
    expect(loadAt(steps, 45)).toBe(0);
  });

  it("peaks inside a window, edges excluded at the end", () => {
    expect(peakLoad(steps, 12, 25)).toBe(150);
    expect(peakLoad(steps, 30, 40)).toBe(50);
    expect(peakLoad(steps, 0, 10)).toBe(0);
  });

  it("draws a closed step area", () => {
    const path = stepAreaPath(
      steps,
      0,
      50,
      (t) => t,
      (m) => 200 - m,
    );
    expect(path).toBe("M0.0,200.0 V200.0 H10.0 V100.0 H20.0 V50.0 H30.0 V150.0 H40.0 V200.0 H50.0 V200.0 Z");
  });
});

describe("lanes", () => {
  it("keeps overlapping windows apart and reuses a lane after an edge-touching end", () => {
    const lanes = assignLanes([
      { id: "a", start: 0, end: 10 },
      { id: "b", start: 5, end: 15 },
      { id: "c", start: 10, end: 20 },
      { id: "d", start: 12, end: 13 },
    ]);
    const byId = Object.fromEntries(lanes.map((l) => [l.item.id, l.lane]));
    expect(byId).toEqual({ a: 0, b: 1, c: 0, d: 2 });
  });
});

describe("time helpers", () => {
  it("round-trips datetime-local values in the browser's zone", () => {
    const t = new Date(2026, 10, 23, 13, 5).getTime();
    expect(toLocalInput(t)).toBe("2026-11-23T13:05");
    expect(fromLocalInput("2026-11-23T13:05")).toBe(t);
    expect(fromLocalInput("tomorrow")).toBeNaN();
  });

  it("puts ticks and the view start on the local grid", () => {
    const t = new Date(2026, 10, 23, 13, 47).getTime();
    expect(floorLocal(t, 3 * HOUR)).toBe(new Date(2026, 10, 23, 12, 0).getTime());
    const zoom = zoomById("1d");
    expect(viewStart(t, zoom)).toBe(new Date(2026, 10, 23, 9, 0).getTime());
    const marks = ticks(t, t + 7 * HOUR, 3 * HOUR);
    expect(marks.map((m) => new Date(m).getHours())).toEqual([15, 18]);
  });

  it("formats rates with sensible digits", () => {
    expect(formatRate(270)).toBe("270 MB/s");
    expect(formatRate(12.345)).toBe("12.3 MB/s");
    expect(formatRate(0.25)).toBe("0.25 MB/s");
    expect(formatRate(null)).toBe("—");
  });
});

describe("labelEvery", () => {
  it("labels every tick when there is room and thins them on a narrow axis", () => {
    expect(labelEvery(120, "03:00 PM")).toBe(1);
    expect(labelEvery(40, "03:00 PM")).toBe(2);
    expect(labelEvery(20, "Tue 24, 03 PM")).toBe(5);
    expect(labelEvery(0, "x")).toBeGreaterThan(1);
  });
});
