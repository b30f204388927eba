import { describe, expect, it } from "vitest";
import type { Spend, SpendLine } from "@/api/spend";
import { currentMonth, spendCsvUrl } from "@/api/spend";
import { monthProgress, tableSpendComponents, usageLines, usedSpendComponents } from "./spend-data";

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

const month = () => ({
  storage: 0,
  requests: 0,
  retrieval: 0,
  egress: 0,
  restores: 0,
  restored_copy: 0,
  lifecycle: 0,
  early_deletion: 0,
});

const line = (l: Partial<SpendLine>): SpendLine => ({
  key: "belle2",
  ...month(),
  total: 0,
  gib_days: 0,
  read_requests: 0,
  write_requests: 0,
  head_requests: 0,
  list_requests: 0,
  other_requests: 0,
  read_bytes: 0,
  write_bytes: 0,
  restore_requests: 0,
  restored_bytes: 0,
  transitions: 0,
  catalogs: [],
  egress_explained: "",
  ...l,
});

describe("spend data", () => {
  it("draws only the components that cost anything", () => {
    const s = spend([
      { month: "2026-10", ...month(), storage: 1, total: 1 },
      { month: "2026-11", ...month(), storage: 1, requests: 0.1, restores: 0.2, total: 1.3 },
    ]);
    expect(usedSpendComponents(s)).toEqual(["storage", "requests", "restores"]);
  });

  it("shows storage and the components a line costs, and the counts it has", () => {
    const l = line({
      restored_copy: 0.5,
      head_requests: 3,
      list_requests: 2,
      restore_requests: 4,
      restored_bytes: 4e9,
    });
    expect(tableSpendComponents([line({}), l])).toEqual(["storage", "restored_copy"]);
    expect(usageLines(l)).toEqual(["0 GET (0 B) · 0 PUT (0 B)", "3 HEAD · 2 LIST", "4 restored (3.7 GiB)"]);
  });

  it("says where a line's read bytes left their provider", () => {
    const l = line({
      read_requests: 2000,
      read_bytes: 2 ** 31,
      egress_explained: "2.00 GiB read over the research network",
    });
    expect(usageLines(l)).toEqual([
      "2,000 GET (2 GiB) · 0 PUT (0 B)",
      "2.00 GiB read over the research network",
    ]);
  });

  it("says how much of the month is gone", () => {
    expect(monthProgress(spend([], 15, 30))).toBe("50 % of the month");
    expect(monthProgress(spend([], 31, 30))).toBe("100 % of the month");
  });

  it("builds the CSV link and the current UTC month", () => {
    expect(spendCsvUrl("2026-11", "tier")).toBe("/api/spend.csv?month=2026-11&group_by=tier");
    expect(currentMonth(new Date(Date.UTC(2026, 10, 30, 23, 59)))).toBe("2026-11");
  });
});
