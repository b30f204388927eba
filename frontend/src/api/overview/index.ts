import { queryOptions } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type Overview = Schemas["OverviewOut"];
export type TierUsage = Schemas["TierUsage"];
export type BucketUsage = Schemas["BucketUsage"];

export const overviewKeys = {
  all: ["overview"] as const,
  detail: () => [...overviewKeys.all, "detail"] as const,
};

export const overviewQueryOptions = () =>
  queryOptions({
    queryKey: overviewKeys.detail(),
    queryFn: () => unwrap(api.GET("/api/overview")),
    // Usage changes as the gateway writes; a slow refresh keeps the page honest without load.
    refetchInterval: 30_000,
  });
