import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";
import { overviewKeys } from "../overview";

export type Tier = Schemas["TierOut"];
export type TierCreate = Schemas["TierCreate"];
export type TierUpdate = Schemas["TierUpdate"];

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

/** Tiers appear on the Overview too: both refresh after a change. */
function useInvalidateTiers() {
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: tierKeys.all }),
      queryClient.invalidateQueries({ queryKey: overviewKeys.all }),
    ]);
}

export function useCreateTier() {
  const invalidate = useInvalidateTiers();
  return useMutation({
    mutationFn: (body: TierCreate) => unwrap(api.POST("/api/tiers", { body })),
    onSuccess: invalidate,
  });
}

export function useUpdateTier() {
  const invalidate = useInvalidateTiers();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: TierUpdate }) =>
      unwrap(api.PATCH("/api/tiers/{tier_id}", { params: { path: { tier_id: id } }, body })),
    onSuccess: invalidate,
  });
}

export function useDeleteTier() {
  const invalidate = useInvalidateTiers();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/tiers/{tier_id}", { params: { path: { tier_id: id } } })),
    onSuccess: invalidate,
  });
}

export type TierCheck = Schemas["TierCheck"];
export type TierCheckOut = Schemas["TierCheckOut"];

/** The tier form's connection test: the settings reach their location with their credentials. */
export function useCheckTier() {
  return useMutation({
    mutationFn: (body: TierCheck) => unwrap(api.POST("/api/tiers/check", { body })),
  });
}
