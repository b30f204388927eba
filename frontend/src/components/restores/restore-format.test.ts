import { describe, expect, it } from "vitest";
import { etaText, fasterSpeeds, formatUsd, readyShare, stateLabel, timelineRows } from "./restore-format";

describe("restore formatting", () => {
  it("shows the share of objects ready", () => {
    expect(readyShare({ objects: 8, ready: 2, failed: 0, bytes: 0, ready_bytes: 0 })).toBe(0.25);
    expect(readyShare({ objects: 0, ready: 0, failed: 0, bytes: 0, ready_bytes: 0 })).toBe(0);
  });

  it("words the ETA relative to now, only for running batches", () => {
    const now = Date.parse("2026-11-22T10:00:00Z");
    expect(etaText("2026-11-22T10:00:30Z", "in_progress", now)).toBe("in 30 s");
    expect(etaText("2026-11-22T13:30:00", "in_progress", now)).toBe("in 3.5 h");
    expect(etaText("2026-11-22T09:59:00Z", "in_progress", now)).toBe("any moment now");
    expect(etaText(null, "in_progress", now)).toBe("unknown");
    expect(etaText("2026-11-22T10:00:30Z", "ready", now)).toBe("—");
  });

  it("formats dollars with cents, and sub-cent amounts with two significant digits", () => {
    expect(formatUsd("0.050000")).toBe("$0.05");
    expect(formatUsd("1234.5")).toBe("$1,234.50");
    expect(formatUsd("0.000031")).toBe("$0.000031");
    expect(formatUsd("0.0000010")).toBe("$0.000001");
    expect(formatUsd("0.000159")).toBe("$0.00016");
    expect(formatUsd("0")).toBe("$0.00");
    expect(formatUsd(null)).toBe("—");
  });

  it("builds the ready curve from the batch's creation", () => {
    expect(
      timelineRows("2026-11-22T10:00:00Z", [
        { at: "2026-11-22T10:00:05Z", ready: 4 },
        { at: "2026-11-22T10:00:06.500Z", ready: 10 },
      ]),
    ).toEqual([
      { t: 0, ready: 0 },
      { t: 5, ready: 4 },
      { t: 6.5, ready: 10 },
    ]);
  });

  it("draws objects ready in one poll as one step to their total, held to the end", () => {
    const at = "2026-11-22T10:00:30Z";
    const points = [1, 2, 3, 4, 5].map((ready) => ({ at, ready }));
    expect(timelineRows("2026-11-22T10:00:00Z", points, "2026-11-22T10:01:00Z")).toEqual([
      { t: 0, ready: 0 },
      { t: 30, ready: 5 },
      { t: 60, ready: 5 },
    ]);
    // an end before the last step adds nothing
    expect(timelineRows("2026-11-22T10:00:00Z", points, "2026-11-22T10:00:10Z")).toHaveLength(2);
  });

  it("offers only faster speeds for an upgrade", () => {
    const all = ["expedited", "standard", "bulk"] as const;
    expect(fasterSpeeds("bulk", all)).toEqual(["expedited", "standard"]);
    expect(fasterSpeeds("expedited", all)).toEqual([]);
  });

  it("labels states for people", () => {
    expect(stateLabel("in_progress")).toBe("in progress");
    expect(stateLabel("failed")).toBe("needs attention");
  });
});
