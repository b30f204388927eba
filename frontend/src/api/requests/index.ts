import { queryOptions } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type RequestTrace = Schemas["RequestTraceOut"];
export type RequestPhase = Schemas["PhaseOut"];

export interface RequestFilters {
  operation?: string;
  bucket?: string;
  slowerThanMs?: number;
}

export const requestsKeys = {
  all: ["requests"] as const,
  list: (filters: RequestFilters) => [...requestsKeys.all, "list", filters] as const,
  detail: (id: string) => [...requestsKeys.all, "detail", id] as const,
};

export const requestsQueryOptions = (filters: RequestFilters) =>
  queryOptions({
    queryKey: requestsKeys.list(filters),
    queryFn: () =>
      unwrap(
        api.GET("/api/requests", {
          params: {
            query: {
              operation: filters.operation || undefined,
              bucket: filters.bucket || undefined,
              slower_than_ms: filters.slowerThanMs,
              limit: 200,
            },
          },
        }),
      ),
    refetchInterval: 5000,
  });

export const requestQueryOptions = (id: string) =>
  queryOptions({
    queryKey: requestsKeys.detail(id),
    queryFn: () => unwrap(api.GET("/api/requests/{request_id}", { params: { path: { request_id: id } } })),
  });

export type Activity = Schemas["ActivityOut"];

export const activityQueryOptions = () =>
  queryOptions({
    queryKey: [...requestsKeys.all, "activity"] as const,
    queryFn: () => unwrap(api.GET("/api/activity")),
    refetchInterval: 5000,
  });
