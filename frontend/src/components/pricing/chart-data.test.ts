import { describe, expect, it } from "vitest";
import type { Report } from "@/api/pricing";
import {
  breakdownRows,
  curveRows,
  formatFrequency,
  formatUsd,
  logTicks,
  markersInRange,
  usedComponents,
} from "./chart-data";

const zero = {
  storage: 0,
  requests: 0,
  retrieval: 0,
  restore: 0,
  restored_copy: 0,
  egress: 0,
  early_deletion: 0,
  monitoring: 0,
  fixed: 0,
  total: 0,
};

const report = {
  tiers: [
    { tier: "STANDARD", monthly: { ...zero, storage: 15.825, total: 15.825 }, total: zero },
    {
      tier: "STANDARD_IA",
      monthly: { ...zero, storage: 12.027, retrieval: 6.33, total: 18.357 },
      total: zero,
    },
  ],
  sweep: {
    reads_per_month: [0.1, 1, 10],
    totals: { STANDARD: [15.8, 15.8, 15.9], STANDARD_IA: [12.6, 18.4, 75.3] },
  },
  break_even: [
    { cheaper_below: "STANDARD_IA", cheaper_above: "STANDARD", reads_per_month: 0.6 },
    { cheaper_below: "X", cheaper_above: "Y", reads_per_month: 250 },
  ],
} as unknown as Report;

describe("chart data", () => {
  it("puts every tier's total on each swept frequency", () => {
    expect(curveRows(report)).toEqual([
      { f: 0.1, STANDARD: 15.8, STANDARD_IA: 12.6 },
      { f: 1, STANDARD: 15.8, STANDARD_IA: 18.4 },
      { f: 10, STANDARD: 15.9, STANDARD_IA: 75.3 },
    ]);
  });

  it("keeps only the break-even points inside the charted range", () => {
    expect(markersInRange(report, 0.01, 100)).toEqual([
      { readsPerMonth: 0.6, cheaperBelow: "STANDARD_IA", cheaperAbove: "STANDARD" },
    ]);
    expect(markersInRange(report, 1, 1000).map((m) => m.readsPerMonth)).toEqual([250]);
  });

  it("makes decade ticks for the log axis", () => {
    expect(logTicks(0.01, 100)).toEqual([0.01, 0.1, 1, 10, 100]);
    expect(logTicks(0.3, 0.5)).toEqual([0.3, 0.5]);
  });

  it("lists the cost components that are used", () => {
    const rows = breakdownRows(report);
    expect(rows[1]?.retrieval).toBe(6.33);
    expect(usedComponents(rows)).toEqual(["storage", "retrieval"]);
  });

  it("formats dollars and frequencies", () => {
    expect(formatUsd(15.825)).toBe("$15.83");
    expect(formatUsd(0.00037)).toBe("$0.00037");
    expect(formatFrequency(0.59994)).toBe("0.6");
    expect(formatFrequency(6.6679)).toBe("6.67");
  });
});
