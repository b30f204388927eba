import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type Benchmarks = Schemas["BenchmarksOut"];
export type BenchmarkFigure = Schemas["Figure"];
export type BenchmarkRun = Schemas["BenchmarkRunOut"];
export type BenchmarkPoint = Schemas["BenchmarkPointOut"];
export type BenchmarkRunIn = Schemas["BenchmarkRunIn"];

export const benchmarksKeys = {
  all: ["benchmarks"] as const,
  recorded: () => [...benchmarksKeys.all, "recorded"] as const,
  runs: () => [...benchmarksKeys.all, "runs"] as const,
};

/** The reference figures the developers recorded with the bench/ scripts. */
export const benchmarksQueryOptions = () =>
  queryOptions({
    queryKey: benchmarksKeys.recorded(),
    queryFn: () => unwrap(api.GET("/api/benchmarks")),
  });

/** The user's runs; polled while one is queued or running. */
export const benchmarkRunsQueryOptions = () =>
  queryOptions({
    queryKey: benchmarksKeys.runs(),
    queryFn: () => unwrap(api.GET("/api/benchmarks/runs", { params: { query: { limit: 50 } } })),
    refetchInterval: (query) =>
      query.state.data?.items.some((r) => r.state === "queued" || r.state === "running") ? 2000 : false,
  });

export function useCreateBenchmarkRun() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: BenchmarkRunIn) => unwrap(api.POST("/api/benchmarks/runs", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: benchmarksKeys.runs() }),
  });
}

export function useCancelBenchmarkRun() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.POST("/api/benchmarks/runs/{run_id}/cancel", { params: { path: { run_id: id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: benchmarksKeys.runs() }),
  });
}

export function useDeleteBenchmarkRun() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/benchmarks/runs/{run_id}", { params: { path: { run_id: id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: benchmarksKeys.runs() }),
  });
}
