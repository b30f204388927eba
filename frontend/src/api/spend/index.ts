import { keepPreviousData, queryOptions } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type Spend = Schemas["SpendOut"];
export type SpendLine = Schemas["SpendLineOut"];
export type SpendMonth = Schemas["SpendMonthOut"];
export type Planned = Schemas["PlannedOut"];
export type GroupBy = "tier" | "bucket" | "user";

export const spendKeys = {
  all: ["spend"] as const,
  month: (month: string, groupBy: GroupBy) => [...spendKeys.all, month, groupBy] as const,
};

/** The month's spend so far by tier, bucket or user, its forecast, past months and the plan beside it. */
export const spendQueryOptions = (month: string, groupBy: GroupBy) =>
  queryOptions({
    queryKey: spendKeys.month(month, groupBy),
    queryFn: () =>
      unwrap(
        api.GET("/api/spend", {
          params: { query: { month, group_by: groupBy } },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: 30_000,
  });

/** Where the browser downloads the month's CSV (same origin, the session cookie goes along). */
export function spendCsvUrl(month: string, groupBy: GroupBy): string {
  const query = new URLSearchParams({ month, group_by: groupBy });
  return `/api/spend.csv?${query.toString()}`;
}

/** The current month as YYYY-MM in UTC (months are UTC in the API). */
export function currentMonth(now: Date = new Date()): string {
  return now.toISOString().slice(0, 7);
}
