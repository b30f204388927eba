import { describe, expect, it } from "vitest";
import type { Report } from "@/api/pricing";
import {
  adjacentPairs,
  breakdownRows,
  curveRows,
  formatFrequency,
  isRankedMarker,
  logTicks,
  markersInRange,
  ranking,
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

  it("formats frequencies", () => {
    expect(formatFrequency(0.59994)).toBe("0.6");
    expect(formatFrequency(6.6679)).toBe("6.67");
  });
});

const option = (tier: string, storage: number, restore = 0, hours: number | null = null) => ({
  tier,
  monthly: { ...zero, storage, restore, total: storage + restore },
  total: zero,
  restore_hours: hours === null ? null : { typical: hours, max: hours * 2 },
});

// four options at 1 read a month: D < A < C < B; A and D cross, B and C cross, A never beats C's neighbour B
const many = {
  reads_per_month: 1,
  tiers: [option("A", 10), option("B", 20, 5, 4), option("C", 12, 1), option("D", 2, 6, 12)],
  break_even: [
    { cheaper_below: "D", cheaper_above: "A", reads_per_month: 1.5 },
    { cheaper_below: "C", cheaper_above: "B", reads_per_month: 0.2 },
    { cheaper_below: "D", cheaper_above: "B", reads_per_month: 3 },
    { cheaper_below: "D", cheaper_above: "C", reads_per_month: 2 },
  ],
  dominance: [{ cheaper: "A", costlier: "C", equal: false }],
} as unknown as Report;

describe("ranked answer", () => {
  it("ranks the options at the scenario's frequency with what each costs more and what dominates", () => {
    expect(ranking(many)).toEqual([
      { tier: "D", monthly: 8, more: 0, dominant: "restore", restoreHours: 12 },
      { tier: "A", monthly: 10, more: 2, dominant: "storage", restoreHours: null },
      { tier: "C", monthly: 13, more: 5, dominant: "storage", restoreHours: null },
      { tier: "B", monthly: 25, more: 17, dominant: "storage", restoreHours: 4 },
    ]);
  });

  it("keeps only the break-even points between neighbours in the ranking", () => {
    const pairs = adjacentPairs(many, ranking(many));
    expect(pairs.map((p) => [p.cheaper, p.costlier, p.crossings.map((m) => m.readsPerMonth)])).toEqual([
      ["D", "A", [1.5]],
      ["A", "C", []],
      ["C", "B", [0.2]],
    ]);
    const labelled = markersInRange(many, 0.01, 100).filter((m) => isRankedMarker(m, pairs));
    expect(labelled.map((m) => m.readsPerMonth)).toEqual([0.2, 1.5]);
  });
});
