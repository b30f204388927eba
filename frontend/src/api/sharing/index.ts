import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type Sharing = Schemas["SharingOut"];
export type UserGrant = Schemas["UserGrantOut"];
export type PolicyCheck = Schemas["PolicyCheckOut"];
export type SharedBucket = Schemas["SharedBucketOut"];
export type Access = UserGrant["access"];

export const sharingKeys = {
  all: ["sharing"] as const,
  bucket: (bucket: string) => [...sharingKeys.all, "bucket", bucket] as const,
  withMe: () => [...sharingKeys.all, "with-me"] as const,
};

const path = (bucket: string) => ({ params: { path: { name: bucket } } });

export const sharingQueryOptions = (bucket: string) =>
  queryOptions({
    queryKey: sharingKeys.bucket(bucket),
    queryFn: () => unwrap(api.GET("/api/buckets/{name}/sharing", path(bucket))),
    enabled: bucket !== "",
  });

export const sharedWithMeQueryOptions = () =>
  queryOptions({ queryKey: sharingKeys.withMe(), queryFn: () => unwrap(api.GET("/api/sharing/with-me")) });

/** Every change answers the bucket's new sharing: it replaces the cached one. */
function useSharingChange<V>(bucket: string, call: (vars: V) => Promise<Sharing>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: call,
    onSuccess: (data) => queryClient.setQueryData(sharingKeys.bucket(bucket), data),
  });
}

export function useGrantUser(bucket: string) {
  return useSharingChange(bucket, ({ username, access }: { username: string; access: Access }) =>
    unwrap(
      api.PUT("/api/buckets/{name}/sharing/users/{username}", {
        params: { path: { name: bucket, username } },
        body: { access },
      }),
    ),
  );
}

export function useRevokeUser(bucket: string) {
  return useSharingChange(bucket, (username: string) =>
    unwrap(
      api.DELETE("/api/buckets/{name}/sharing/users/{username}", {
        params: { path: { name: bucket, username } },
      }),
    ),
  );
}

export function usePublishPrefix(bucket: string) {
  return useSharingChange(bucket, (prefix: string) =>
    unwrap(
      api.POST("/api/buckets/{name}/sharing/public", { ...path(bucket), body: { prefix, confirm: true } }),
    ),
  );
}

export function useUnpublishPrefix(bucket: string) {
  return useSharingChange(bucket, (prefix: string) =>
    unwrap(
      api.DELETE("/api/buckets/{name}/sharing/public", {
        params: { path: { name: bucket }, query: { prefix } },
      }),
    ),
  );
}

export function useSavePolicy(bucket: string) {
  return useSharingChange(bucket, (policy: string) =>
    unwrap(api.PUT("/api/buckets/{name}/sharing/policy", { ...path(bucket), body: { policy } })),
  );
}

export function useDeletePolicy(bucket: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async () => {
      await unwrap(api.DELETE("/api/buckets/{name}/sharing/policy", path(bucket)));
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: sharingKeys.bucket(bucket) }),
  });
}

/** Validate a policy as the gateway would and say what it allows (nothing is saved). */
export function useCheckPolicy(bucket: string) {
  return useMutation({
    mutationFn: (policy: string) =>
      unwrap(api.POST("/api/buckets/{name}/sharing/policy/check", { ...path(bucket), body: { policy } })),
  });
}
