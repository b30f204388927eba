import { queryOptions } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type Benchmarks = Schemas["BenchmarksOut"];

export const benchmarksKeys = {
  all: ["benchmarks"] as const,
  recorded: () => [...benchmarksKeys.all, "recorded"] as const,
};

export const benchmarksQueryOptions = () =>
  queryOptions({
    queryKey: benchmarksKeys.recorded(),
    queryFn: () => unwrap(api.GET("/api/benchmarks")),
  });
