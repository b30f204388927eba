import { keepPreviousData, queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type Spend = Schemas["SpendOut"];
export type SpendLine = Schemas["SpendLineOut"];
export type SpendMonth = Schemas["SpendMonthOut"];
export type Planned = Schemas["PlannedOut"];
export type SpendPlan = Schemas["SpendPlanOut"];
export type SpendPlanUsage = Schemas["SpendPlanUsageOut"];
export type SpendPlanBody = Schemas["SpendPlanIn"];
export type RestoreSpeed = SpendPlanUsage["restore_speed"];
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

/** Save what a bucket is planned to do each month; the Spend view's plan column is priced again. */
export function useSavePlan(bucket: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: SpendPlanBody) =>
      unwrap(api.PUT("/api/spend/plans/{bucket}", { params: { path: { bucket } }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: spendKeys.all }),
  });
}

/** Forget a bucket's planned usage: it plans storage only again. */
export function useDeletePlan(bucket: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/spend/plans/{bucket}", { params: { path: { bucket } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: spendKeys.all }),
  });
}
