import { keepPreviousData, queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type LifecycleRule = Schemas["LifecycleRule"];
export type LifecycleConfiguration = Schemas["LifecycleConfigurationOut"];
export type LifecycleConfig = Schemas["LifecycleConfig"];
export type BucketLifecycle = Schemas["BucketLifecycle"];
export type Preview = Schemas["PreviewOut"];
export type PreviewDay = Schemas["PreviewDay"];
export type DryRun = Schemas["LifecycleDryRunOut"];
export type Move = Schemas["MoveOut"];
export type Moves = Schemas["MovesOut"];
export type SweepSchedule = Schemas["SweepSchedule"];
export type MoveState = "queued" | "running" | "switched" | "done" | "skipped" | "failed";

/** How often the history asks again while moves are open (the worker sweeps every few minutes). */
export const LIVE_MS = 5_000;
const OPEN: MoveState[] = ["queued", "running", "switched"];

export const lifecycleKeys = {
  all: ["lifecycle"] as const,
  buckets: () => [...lifecycleKeys.all, "buckets"] as const,
  configuration: (bucket: string) => [...lifecycleKeys.all, "configuration", bucket] as const,
  preview: (bucket: string | null) => [...lifecycleKeys.all, "preview", bucket] as const,
  moves: (bucket: string | null, state: MoveState | null) =>
    [...lifecycleKeys.all, "moves", { bucket, state }] as const,
};

export const bucketsQueryOptions = () =>
  queryOptions({
    queryKey: lifecycleKeys.buckets(),
    queryFn: () => unwrap(api.GET("/api/lifecycle/buckets")),
  });

export const configurationQueryOptions = (bucket: string) =>
  queryOptions({
    queryKey: lifecycleKeys.configuration(bucket),
    queryFn: () =>
      unwrap(api.GET("/api/lifecycle/buckets/{bucket}/configuration", { params: { path: { bucket } } })),
    enabled: bucket !== "",
  });

/** What the saved rules will do over 90 days; `null` = every bucket the user sees. */
export const previewQueryOptions = (bucket: string | null) =>
  queryOptions({
    queryKey: lifecycleKeys.preview(bucket),
    queryFn: () =>
      unwrap(
        api.GET("/api/lifecycle/preview", { params: { query: { bucket: bucket ?? undefined, days: 90 } } }),
      ),
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });

export const movesQueryOptions = (bucket: string | null, state: MoveState | null) =>
  queryOptions({
    queryKey: lifecycleKeys.moves(bucket, state),
    queryFn: () =>
      unwrap(
        api.GET("/api/lifecycle/moves", {
          params: { query: { bucket: bucket ?? undefined, state: state ? [state] : undefined, limit: 100 } },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: (query) =>
      query.state.data && OPEN.some((s) => (query.state.data?.counts[s] ?? 0) > 0) ? LIVE_MS : 30_000,
  });

function useInvalidateLifecycle() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: lifecycleKeys.all });
}

/** Add a rule, or replace the rule `replaceId` (the whole set is checked again by the server). */
export function useSaveRule(bucket: string) {
  const invalidate = useInvalidateLifecycle();
  return useMutation({
    mutationFn: ({ rule, replaceId }: { rule: LifecycleRule; replaceId: string | null }) =>
      replaceId === null
        ? unwrap(
            api.POST("/api/lifecycle/buckets/{bucket}/rules", { params: { path: { bucket } }, body: rule }),
          )
        : unwrap(
            api.PUT("/api/lifecycle/buckets/{bucket}/rules/{rule_id}", {
              params: { path: { bucket, rule_id: replaceId } },
              body: rule,
            }),
          ),
    onSuccess: invalidate,
  });
}

export function useDeleteRule(bucket: string) {
  const invalidate = useInvalidateLifecycle();
  return useMutation({
    mutationFn: (ruleId: string) =>
      unwrap(
        api.DELETE("/api/lifecycle/buckets/{bucket}/rules/{rule_id}", {
          params: { path: { bucket, rule_id: ruleId } },
        }),
      ),
    onSuccess: invalidate,
  });
}

/** "What would this rule do?": the preview of an edited rule, nothing saved. */
export function useDryRun(bucket: string) {
  return useMutation({
    mutationFn: ({ rule, replaceId }: { rule: LifecycleRule; replaceId: string | null }) =>
      unwrap(
        api.POST("/api/lifecycle/buckets/{bucket}/dry-run", {
          params: { path: { bucket } },
          body: { rule, replace_id: replaceId, days: 90 },
        }),
      ),
  });
}

export function useRetryMove() {
  const invalidate = useInvalidateLifecycle();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.POST("/api/lifecycle/moves/{move_id}/retry", { params: { path: { move_id: id } } })),
    onSuccess: invalidate,
  });
}

export function useRetryFailed(bucket: string | null) {
  const invalidate = useInvalidateLifecycle();
  return useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/api/lifecycle/moves/retry-failed", { params: { query: { bucket: bucket ?? undefined } } }),
      ),
    onSuccess: invalidate,
  });
}

/** When to ask for the sweep schedule again: just after the next sweep is due (it then has a new start),
 * every half minute while that is unknown or late. */
export function sweepRefetchMs(schedule: SweepSchedule | undefined, now: Date): number {
  const next = schedule?.next_run_at ? new Date(schedule.next_run_at).getTime() : Number.NaN;
  if (!Number.isFinite(next) || next < now.getTime()) return 30_000;
  return Math.min(next - now.getTime() + 5_000, 15 * 60_000);
}

/** How often the workers sweep on their own, when beat's last sweep started and the next is due;
 * asked again just after that, when the next has started. */
export const sweepScheduleQueryOptions = () =>
  queryOptions({
    queryKey: [...lifecycleKeys.all, "sweep"] as const,
    queryFn: () => unwrap(api.GET("/api/lifecycle/sweep")),
    refetchInterval: (query) => sweepRefetchMs(query.state.data, new Date()),
  });

/** Admins: queue a sweep now (one bucket, or all) instead of waiting for the next beat. */
export function useSweepNow(bucket: string | null) {
  const invalidate = useInvalidateLifecycle();
  return useMutation({
    mutationFn: () =>
      unwrap(api.POST("/api/lifecycle/sweep", { params: { query: { bucket: bucket ?? undefined } } })),
    onSuccess: invalidate,
  });
}
