import { queryOptions } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type Tier = Schemas["TierOut"];

export const tierKeys = {
  all: ["tiers"] as const,
  lists: () => [...tierKeys.all, "list"] as const,
  list: () => [...tierKeys.lists()] as const,
  detail: (id: number) => [...tierKeys.all, "detail", id] as const,
};

export const tiersQueryOptions = () =>
  queryOptions({
    queryKey: tierKeys.list(),
    queryFn: () => unwrap(api.GET("/api/tiers")),
  });
