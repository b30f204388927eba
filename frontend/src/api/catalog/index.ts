import { infiniteQueryOptions, queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { readCookie } from "@/lib/cookies";
import { ApiError, api, CSRF_COOKIE, CSRF_HEADER, errorMessage, type Schemas, unwrap } from "../client";
import { overviewKeys } from "../overview";

export type Bucket = Schemas["BucketOut"];
export type BucketCreate = Schemas["BucketCreate"];
export type FolderListing = Schemas["FolderListing"];
export type ObjectSummary = Schemas["ObjectSummary"];
export type ObjectDetail = Schemas["ObjectDetail"];
export type Uploaded = Schemas["UploadOut"];
export type FolderCreated = Schemas["FolderOut"];
export type BucketSettings = Schemas["BucketSettings"];
export type CorsRule = Schemas["CorsRuleIn"];
export type LockUpdate = Schemas["LockUpdate"];

export const PAGE_SIZE = 200;

export const catalogKeys = {
  all: ["catalog"] as const,
  buckets: () => [...catalogKeys.all, "buckets"] as const,
  folders: (bucket: string) => [...catalogKeys.all, "folder", bucket] as const,
  folder: (bucket: string, prefix: string) => [...catalogKeys.folders(bucket), prefix] as const,
  objects: (bucket: string) => [...catalogKeys.all, "object", bucket] as const,
  object: (bucket: string, key: string) => [...catalogKeys.objects(bucket), key] as const,
  settings: (bucket: string) => [...catalogKeys.all, "settings", bucket] as const,
};

export const bucketsQueryOptions = () =>
  queryOptions({ queryKey: catalogKeys.buckets(), queryFn: () => unwrap(api.GET("/api/buckets")) });

/**
 * One folder (sub-folders and objects), page by page in key order; `startsWith` narrows it to names
 * beginning so, answered by the catalog's key index rather than by filtering what the browser holds.
 */
export const folderQueryOptions = (bucket: string, prefix: string, startsWith = "") =>
  infiniteQueryOptions({
    queryKey: [...catalogKeys.folder(bucket, prefix), startsWith] as const,
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET("/api/buckets/{name}/objects", {
          params: {
            path: { name: bucket },
            query: {
              prefix: prefix + startsWith,
              delimiter: "/",
              limit: PAGE_SIZE,
              ...(pageParam ? { cursor: pageParam } : {}),
            },
          },
        }),
      ),
    getNextPageParam: (last: FolderListing) => last.next_cursor ?? null,
  });

export const objectQueryOptions = (bucket: string, key: string) =>
  queryOptions({
    queryKey: catalogKeys.object(bucket, key),
    queryFn: () =>
      unwrap(api.GET("/api/buckets/{name}/object", { params: { path: { name: bucket }, query: { key } } })),
  });

/** Where the browser downloads an object from (a plain link: the session cookie authorises it). */
export function downloadUrl(bucket: string, key: string): string {
  return `/api/buckets/${encodeURIComponent(bucket)}/object/content?key=${encodeURIComponent(key)}`;
}

/** Bucket totals show on the Overview as well: both refresh after a change. */
function useInvalidate() {
  const queryClient = useQueryClient();
  return (bucket?: string) =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: catalogKeys.buckets() }),
      queryClient.invalidateQueries({ queryKey: overviewKeys.all }),
      ...(bucket
        ? [
            queryClient.invalidateQueries({ queryKey: catalogKeys.folders(bucket) }),
            queryClient.invalidateQueries({ queryKey: catalogKeys.objects(bucket) }),
          ]
        : []),
    ]);
}

export function useCreateBucket() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (body: BucketCreate) => unwrap(api.POST("/api/buckets", { body })),
    onSuccess: () => invalidate(),
  });
}

export function useDeleteBucket() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: (name: string) => unwrap(api.DELETE("/api/buckets/{name}", { params: { path: { name } } })),
    onSuccess: () => invalidate(),
  });
}

/** Create an empty folder (the zero-byte `prefix/` marker S3 consoles write); `prefix` is the full key prefix. */
export function useCreateFolder() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: ({ bucket, prefix }: { bucket: string; prefix: string }) =>
      unwrap(
        api.POST("/api/buckets/{name}/folders", { params: { path: { name: bucket } }, body: { prefix } }),
      ),
    onSuccess: (_data, { bucket }) => invalidate(bucket),
  });
}

export function useDeleteObjects() {
  const invalidate = useInvalidate();
  return useMutation({
    mutationFn: async ({ bucket, keys }: { bucket: string; keys: string[] }) => {
      for (const key of keys) {
        await unwrap(
          api.DELETE("/api/buckets/{name}/object", { params: { path: { name: bucket }, query: { key } } }),
        );
      }
    },
    onSuccess: (_data, { bucket }) => invalidate(bucket),
  });
}

export interface UploadProgress {
  loaded: number;
  total: number;
}

/**
 * Upload one file as `prefix + file name` with a multipart form. XMLHttpRequest rather than fetch:
 * it reports upload progress, which a long upload must show.
 */
export function uploadFile(
  bucket: string,
  prefix: string,
  file: File,
  onProgress: (p: UploadProgress) => void,
  signal?: AbortSignal,
): Promise<Uploaded> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/buckets/${encodeURIComponent(bucket)}/objects`);
    xhr.withCredentials = true;
    const token = readCookie(CSRF_COOKIE);
    if (token) xhr.setRequestHeader(CSRF_HEADER, token);
    xhr.upload.onprogress = (e) =>
      onProgress({ loaded: e.loaded, total: e.lengthComputable ? e.total : file.size });
    xhr.onload = () => {
      let body: unknown = xhr.responseText;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON: keep the text for the message
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as Uploaded);
      else reject(new ApiError(xhr.status, errorMessage(body, `${xhr.status} upload failed`), body));
    };
    xhr.onerror = () => reject(new ApiError(0, "the upload was interrupted (network error)", null));
    xhr.onabort = () => reject(new ApiError(0, "upload cancelled", null));
    signal?.addEventListener("abort", () => xhr.abort());
    const form = new FormData();
    form.append("prefix", prefix);
    form.append("file", file, file.name);
    xhr.send(form);
  });
}

export function useUploadInvalidation() {
  return useInvalidate();
}

/** A bucket's versioning, object lock with its default retention, and CORS rules. */
export const bucketSettingsQueryOptions = (bucket: string) =>
  queryOptions({
    queryKey: catalogKeys.settings(bucket),
    queryFn: () => unwrap(api.GET("/api/buckets/{name}/settings", { params: { path: { name: bucket } } })),
    enabled: bucket !== "",
  });

/** Every settings change answers with the bucket's settings: they replace the cached ones. */
function useSettingsMutation<T>(bucket: string, run: (value: T) => Promise<BucketSettings>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: run,
    onSuccess: (data) => queryClient.setQueryData(catalogKeys.settings(bucket), data),
  });
}

const bucketPath = (bucket: string) => ({ params: { path: { name: bucket } } });

export const useSetVersioning = (bucket: string) =>
  useSettingsMutation(bucket, (status: "Enabled" | "Suspended") =>
    unwrap(api.PUT("/api/buckets/{name}/versioning", { ...bucketPath(bucket), body: { status } })),
  );

export const useSetDefaultRetention = (bucket: string) =>
  useSettingsMutation(bucket, (body: LockUpdate) =>
    unwrap(api.PUT("/api/buckets/{name}/lock", { ...bucketPath(bucket), body })),
  );

export const useSetCors = (bucket: string) =>
  useSettingsMutation(bucket, (rules: CorsRule[]) =>
    unwrap(api.PUT("/api/buckets/{name}/cors", { ...bucketPath(bucket), body: { rules } })),
  );

export const useRemoveCors = (bucket: string) =>
  useSettingsMutation(bucket, () => unwrap(api.DELETE("/api/buckets/{name}/cors", bucketPath(bucket))));
