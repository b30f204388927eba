import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type AccessKey = Schemas["AccessKeyOut"];
/** A key with its secret: the only time the secret is ever shown. */
export type NewAccessKey = Schemas["NewAccessKeyOut"];

export const accessKeyKeys = {
  all: ["access-keys"] as const,
  lists: () => [...accessKeyKeys.all, "list"] as const,
  list: () => [...accessKeyKeys.lists()] as const,
};

export const accessKeysQueryOptions = () =>
  queryOptions({
    queryKey: accessKeyKeys.list(),
    queryFn: () => unwrap(api.GET("/api/keys")),
  });

function useInvalidateKeys() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: accessKeyKeys.lists() });
}

/** Mints a key; with `expiresIn` (seconds) a temporary one the gateway refuses once it has expired. */
export function useCreateAccessKey() {
  const invalidate = useInvalidateKeys();
  return useMutation({
    mutationFn: (expiresIn: number | null = null) =>
      unwrap(
        expiresIn === null
          ? api.POST("/api/keys")
          : api.POST("/api/keys", { body: { expires_in: expiresIn } }),
      ),
    onSuccess: invalidate,
  });
}

export function useRotateAccessKey() {
  const invalidate = useInvalidateKeys();
  return useMutation({
    mutationFn: (accessKeyId: string) =>
      unwrap(
        api.POST("/api/keys/{access_key_id}/rotate", { params: { path: { access_key_id: accessKeyId } } }),
      ),
    onSuccess: invalidate,
  });
}

export function useDeleteAccessKey() {
  const invalidate = useInvalidateKeys();
  return useMutation({
    mutationFn: (accessKeyId: string) =>
      unwrap(api.DELETE("/api/keys/{access_key_id}", { params: { path: { access_key_id: accessKeyId } } })),
    onSuccess: invalidate,
  });
}
