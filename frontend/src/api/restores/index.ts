import { keepPreviousData, queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";
import { notificationKeys } from "../notifications";

export type RestoreBatch = Schemas["RestoreBatchOut"];
export type RestoreQueue = Schemas["RestoreQueueOut"];
export type RestoreSummary = Schemas["RestoreSummaryOut"];
export type RestoreBatchDetail = Schemas["RestoreBatchDetailOut"];
export type RestoreItem = Schemas["RestoreItemOut"];
export type RestorePreview = Schemas["RestorePreviewOut"];
export type RestorePreviewIn = Schemas["RestorePreviewIn"];
export type RestoreBatchCreate = Schemas["RestoreBatchCreate"];
export type RestoreSpeedOption = Schemas["RestoreSpeedOption"];
export type Speed = RestoreBatch["speed"];
export type ItemState = RestoreItem["state"];
export type Scope = RestoreSummary["scope"];
export type FolderListing = Schemas["FolderListing"];
export type BucketOut = Schemas["BucketOut"];

/** A Browser selection: keys of one bucket and/or every key under folders (prefixes). */
export interface Selection {
  bucket: string;
  keys: string[];
  prefixes: string[];
}

export const SPEEDS: Speed[] = ["expedited", "standard", "bulk"];
/** How often a page showing running restores asks again (the worker sweeps every 2 s by default). */
export const LIVE_MS = 2_000;

export const restoreKeys = {
  all: ["restores"] as const,
  queue: (scope: Scope) => [...restoreKeys.all, "queue", scope] as const,
  detail: (id: number) => [...restoreKeys.all, "detail", id] as const,
  items: (id: number, state: ItemState | null, afterId: number | null, version: string) =>
    [...restoreKeys.all, "items", id, { state, afterId, version }] as const,
  preview: (selection: Selection, days: number) => [...restoreKeys.all, "preview", selection, days] as const,
  buckets: () => [...restoreKeys.all, "picker", "buckets"] as const,
  folder: (bucket: string, prefix: string) =>
    [...restoreKeys.all, "picker", "folder", bucket, prefix] as const,
};

const running = (batches: RestoreBatch[]) => batches.some((b) => b.state === "in_progress");

/** The Restores page's data; polled while anything runs. The server answers 304 while nothing moved. */
export const queueQueryOptions = (scope: Scope) =>
  queryOptions({
    queryKey: restoreKeys.queue(scope),
    queryFn: () =>
      unwrap(api.GET("/api/restores/queue", { params: { query: { scope } } })) as Promise<RestoreQueue>,
    refetchInterval: (query) =>
      query.state.data && running(query.state.data.batches.items) ? LIVE_MS : 15_000,
  });

export const batchQueryOptions = (id: number) =>
  queryOptions({
    queryKey: restoreKeys.detail(id),
    queryFn: () =>
      unwrap(api.GET("/api/restores/batches/{batch_id}", { params: { path: { batch_id: id } } })),
    refetchInterval: (query) => (query.state.data?.batch.state === "in_progress" ? LIVE_MS : false),
  });

/** One page of a batch's objects; `version` (the batch's updated_at) refetches it whenever the batch moved. */
export const itemsQueryOptions = (
  id: number,
  state: ItemState | null,
  afterId: number | null,
  version: string,
) =>
  queryOptions({
    queryKey: restoreKeys.items(id, state, afterId, version),
    queryFn: () =>
      unwrap(
        api.GET("/api/restores/batches/{batch_id}/items", {
          params: {
            path: { batch_id: id },
            query: { state: state ?? undefined, after_id: afterId ?? undefined },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });

export const previewQueryOptions = (selection: Selection, days: number) =>
  queryOptions({
    queryKey: restoreKeys.preview(selection, days),
    queryFn: () => unwrap(api.POST("/api/restores/preview", { body: { ...selection, days } })),
    placeholderData: keepPreviousData,
    staleTime: 10_000,
  });

/** Buckets and folder listings for picking objects to restore. */
/** Buckets that hold archived objects: the only ones a restore can start from. */
export const pickerBucketsQueryOptions = () =>
  queryOptions({
    queryKey: restoreKeys.buckets(),
    queryFn: () => unwrap(api.GET("/api/buckets", { params: { query: { archived: true } } })),
  });

export const pickerFolderQueryOptions = (bucket: string, prefix: string) =>
  queryOptions({
    queryKey: restoreKeys.folder(bucket, prefix),
    queryFn: () =>
      unwrap(
        api.GET("/api/buckets/{name}/objects", {
          params: { path: { name: bucket }, query: { prefix, delimiter: "/", limit: 500 } },
        }),
      ),
    enabled: bucket !== "",
    placeholderData: keepPreviousData,
  });

function useInvalidateRestores() {
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: restoreKeys.all }),
      queryClient.invalidateQueries({ queryKey: notificationKeys.all }),
    ]);
}

export function useCreateBatch() {
  const invalidate = useInvalidateRestores();
  return useMutation({
    mutationFn: (body: RestoreBatchCreate) => unwrap(api.POST("/api/restores/batches", { body })),
    onSuccess: invalidate,
  });
}

export function useRetryBatch() {
  const invalidate = useInvalidateRestores();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.POST("/api/restores/batches/{batch_id}/retry", { params: { path: { batch_id: id } } })),
    onSuccess: invalidate,
  });
}

export function useUpgradeSpeed() {
  const invalidate = useInvalidateRestores();
  return useMutation({
    mutationFn: ({ id, speed }: { id: number; speed: Speed }) =>
      unwrap(
        api.POST("/api/restores/batches/{batch_id}/speed", {
          params: { path: { batch_id: id } },
          body: { speed },
        }),
      ),
    onSuccess: invalidate,
  });
}

/** Links of the download-list exports (served as attachments). */
export function exportUrls(id: number) {
  const base = `/api/restores/batches/${id}`;
  return {
    csv: `${base}/export.csv`,
    tierpilot: `${base}/commands.sh?tool=tierpilot`,
    aws: `${base}/commands.sh?tool=aws`,
  };
}

/** The Browser's download of one object. */
export function downloadUrl(bucket: string, key: string): string {
  return `/api/buckets/${encodeURIComponent(bucket)}/object/content?key=${encodeURIComponent(key)}`;
}
