// @vitest-environment node
import { describe, expect, it } from "vitest";
import {
  chartByteUnit,
  formatBytes,
  formatCount,
  formatDateTime,
  formatDuration,
  formatPercent,
  usedShare,
} from "./format";

describe("formatBytes", () => {
  it("uses binary units as cloud bills do", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1536)).toBe("1.50 KiB");
    expect(formatBytes(633 * 1024 ** 3)).toBe("633 GiB");
    expect(formatBytes(1.5 * 1024 ** 4)).toBe("1.50 TiB");
    expect(formatBytes(12.34 * 1024 ** 2)).toBe("12.3 MiB");
  });

  it("shows a dash for unknown sizes", () => {
    expect(formatBytes(null)).toBe("—");
    expect(formatBytes(undefined)).toBe("—");
    expect(formatBytes(Number.NaN)).toBe("—");
  });
});

describe("shares", () => {
  it("keeps tiny non-zero shares visible", () => {
    expect(formatPercent(0)).toBe("0 %");
    expect(formatPercent(0.004)).toBe("<1 %");
    expect(formatPercent(0.5)).toBe("50 %");
  });

  it("has no used share without a capacity and clamps overfull tiers", () => {
    expect(usedShare(10, null)).toBeNull();
    expect(usedShare(10, 0)).toBeNull();
    expect(usedShare(25, 100)).toBe(0.25);
    expect(usedShare(250, 100)).toBe(1);
  });
});

describe("formatCount", () => {
  it("groups thousands", () => {
    expect(formatCount(1680000)).toBe("1,680,000");
  });
});

describe("formatDateTime", () => {
  it("reads a timestamp without a zone as UTC, like one with Z", () => {
    expect(formatDateTime("2026-11-22T10:00:00")).toBe(formatDateTime("2026-11-22T10:00:00Z"));
    expect(formatDateTime("2026-11-22T10:00:00+00:00")).toBe(formatDateTime("2026-11-22T10:00:00Z"));
  });

  it("shows a dash for missing or broken timestamps", () => {
    expect(formatDateTime(null)).toBe("—");
    expect(formatDateTime("not a date")).toBe("—");
  });
});

describe("formatDuration", () => {
  it("picks the largest sensible unit", () => {
    expect(formatDuration(5)).toBe("5 s");
    expect(formatDuration(90)).toBe("1.5 min");
    expect(formatDuration(200 * 60)).toBe("3.3 h");
    expect(formatDuration(2 * 86400)).toBe("2 d");
  });
});

describe("chartByteUnit", () => {
  it("scales a chart to the unit of its largest value", () => {
    expect(chartByteUnit(15.6 * 1024 ** 2)).toEqual({ divisor: 1024 ** 2, label: "MiB" });
    expect(chartByteUnit(633 * 1024 ** 3)).toEqual({ divisor: 1024 ** 3, label: "GiB" });
    expect(chartByteUnit(0)).toEqual({ divisor: 1, label: "B" });
  });
});
