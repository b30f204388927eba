// @vitest-environment node
import { describe, expect, it } from "vitest";
import {
  chartByteUnit,
  formatBytes,
  formatCount,
  formatCountOf,
  formatDateTime,
  formatDuration,
  formatGib,
  formatMoney,
  formatPercent,
  formatRate,
  formatSize,
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
    expect(formatPercent(0.004)).toBe("0.4 %");
    expect(formatPercent(0.00123)).toBe("0.12 %");
    expect(formatPercent(0.035)).toBe("3.5 %");
    expect(formatPercent(0.0000004)).toBe("<0.01 %");
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

describe("one way for counts, rates, money and zoned dates", () => {
  it("says 1 object, 2 objects", () => {
    expect(formatCountOf(1, "object")).toBe("1 object");
    expect(formatCountOf(0, "object")).toBe("0 objects");
    expect(formatCountOf(1200, "entry", "entries")).toBe("1,200 entries");
  });

  it("prints a rate the same whether it came as 600 or 600.0", () => {
    expect(formatRate(600)).toBe("600 MB/s");
    expect(formatRate(600.0)).toBe(formatRate(Number("600.0")));
    expect(formatRate(12.345)).toBe("12.3 MB/s");
    expect(formatRate(1500)).toBe("1,500 MB/s");
    expect(formatRate(null)).toBe("—");
  });

  it("keeps sub-cent amounts visible", () => {
    expect(formatMoney(1234.5)).toBe("$1,234.50");
    expect(formatMoney(0.0042)).toBe("$0.0042");
    expect(formatMoney(0.000123)).toBe("$0.000123");
    expect(formatMoney(1124.19)).toBe("$1,124.19");
    expect(formatMoney(-0.0042)).toBe("-$0.0042");
    expect(formatMoney(0)).toBe("$0.00");
    expect(formatMoney(Number.NaN)).toBe("—");
  });

  it("names the time zone when asked", () => {
    const plain = formatDateTime("2026-11-22T10:00:00Z");
    const zoned = formatDateTime("2026-11-22T10:00:00Z", true);
    expect(zoned).not.toBe(plain);
    expect(zoned).toMatch(/UTC|GMT|[A-Z]{2,5}/);
  });
});

describe("formatMoney with a unit", () => {
  it("prints unit prices below a dollar with three significant digits and their unit", () => {
    expect(formatMoney(0.01123046875, "GiB-month")).toBe("$0.0112/GiB-month");
    expect(formatMoney(0.023, "GiB-month")).toBe("$0.023/GiB-month");
    expect(formatMoney(0.00099, "GiB-month")).toBe("$0.00099/GiB-month");
    expect(formatMoney(10, "1k requests")).toBe("$10.00/1k requests");
    expect(formatMoney(0, "GiB")).toBe("$0.00/GiB");
  });

  it("prints zero and whole amounts as cents, with the currency sign first", () => {
    expect(formatMoney(0)).toBe("$0.00");
    expect(formatMoney(912.6)).toBe("$912.60");
    expect(formatMoney(0.00004)).toBe("$0.00004");
  });
});

describe("formatSize", () => {
  it("prints binary units with thousands separators and one decimal at most", () => {
    expect(formatGib(204800)).toBe("200 TiB");
    expect(formatGib(10240, "GiB")).toBe("10,240 GiB");
    expect(formatGib(10240)).toBe("10 TiB");
    expect(formatGib(633)).toBe("633 GiB");
    expect(formatGib(1536)).toBe("1.5 TiB");
    expect(formatSize(1536)).toBe("1.5 KiB");
    expect(formatSize(1023)).toBe("1,023 B");
    expect(formatGib(0)).toBe("0 B");
    expect(formatGib(1.2 * 1024 ** 3)).toBe("1.2 EiB");
  });

  it("keeps a small size from rounding to zero in a large unit", () => {
    expect(formatGib(0.01, "GiB")).toBe("0.01 GiB");
  });

  it("shows a dash for unknown sizes", () => {
    expect(formatSize(null)).toBe("—");
    expect(formatGib(undefined)).toBe("—");
    expect(formatSize(Number.NaN)).toBe("—");
  });
});
