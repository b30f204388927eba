import { describe, expect, it } from "vitest";
import type { Spend } from "@/api/spend";
import { currentMonth, spendCsvUrl } from "@/api/spend";
import { formatBytes, monthProgress, usedSpendComponents } from "./spend-data";

const spend = (history: Spend["history"], days = 15, inMonth = 30): Spend => ({
  month: "2026-11",
  group_by: "bucket",
  currency: "USD",
  days_elapsed: days,
  days_in_month: inMonth,
  so_far: 1,
  forecast: 2,
  groups: [],
  history,
  planned: [],
  divergence_share: 0.2,
  not_metered: [],
});

describe("spend data", () => {
  it("draws only the components that cost anything", () => {
    const s = spend([
      { month: "2026-10", storage: 1, requests: 0, retrieval: 0, egress: 0, lifecycle: 0, total: 1 },
      { month: "2026-11", storage: 1, requests: 0.1, retrieval: 0, egress: 0, lifecycle: 0, total: 1.1 },
    ]);
    expect(usedSpendComponents(s)).toEqual(["storage", "requests"]);
  });

  it("says how much of the month is gone", () => {
    expect(monthProgress(spend([], 15, 30))).toBe("50 % of the month");
    expect(monthProgress(spend([], 31, 30))).toBe("100 % of the month");
  });

  it("writes bytes with decimal units", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(15_600_000)).toBe("15.6 MB");
    expect(formatBytes(2_500_000_000_000)).toBe("2.5 TB");
  });

  it("builds the CSV link and the current UTC month", () => {
    expect(spendCsvUrl("2026-11", "tier")).toBe("/api/spend.csv?month=2026-11&group_by=tier");
    expect(currentMonth(new Date(Date.UTC(2026, 10, 30, 23, 59)))).toBe("2026-11");
  });
});
