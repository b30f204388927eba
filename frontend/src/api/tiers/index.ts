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
  health: () => [...tierKeys.all, "health"] as const,
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

export type TierHealth = Schemas["TierHealthOut"];

/**
 * Admins: whether each tier answers with its stored settings. The server probes all tiers at once (up to
 * 10 s) and reuses answers for a few seconds, so this is fetched on demand, never polled.
 */
export const tierHealthQueryOptions = () =>
  queryOptions({
    queryKey: tierKeys.health(),
    queryFn: () => unwrap(api.GET("/api/tiers/health")),
    staleTime: 5_000,
    refetchOnWindowFocus: false,
  });

export type TierCheck = Schemas["TierCheck"];
export type TierCheckOut = Schemas["TierCheckOut"];

/** The tier form's connection test: the settings reach their location with their credentials. */
export function useCheckTier() {
  return useMutation({
    mutationFn: (body: TierCheck) => unwrap(api.POST("/api/tiers/check", { body })),
  });
}

export type Adoption = Schemas["AdoptionOut"];
export type AdoptIn = Schemas["AdoptIn"];

/** Tiers whose endpoint can hold buckets to adopt in place. */
export const ADOPTING_DRIVERS = ["s3", "azure", "gcs"];

export const adoptionKeys = {
  all: [...tierKeys.all, "adoptions"] as const,
  job: (tierId: number, jobId: number) => [...adoptionKeys.all, tierId, jobId] as const,
};

/** An adoption's progress, polled each second until its scan ends. */
export const adoptionQueryOptions = (tierId: number, jobId: number) =>
  queryOptions({
    queryKey: adoptionKeys.job(tierId, jobId),
    queryFn: () =>
      unwrap(
        api.GET("/api/tiers/{tier_id}/adopt/{job_id}", {
          params: { path: { tier_id: tierId, job_id: jobId } },
        }),
      ),
    refetchInterval: (query) =>
      query.state.data && ["done", "failed"].includes(query.state.data.state) ? false : 1000,
  });

/** Queue the adoption of a remote bucket; the tiers (usage) refresh when it is queued. */
export function useStartAdoption() {
  const invalidate = useInvalidateTiers();
  return useMutation({
    mutationFn: ({ tierId, body }: { tierId: number; body: AdoptIn }) =>
      unwrap(api.POST("/api/tiers/{tier_id}/adopt", { params: { path: { tier_id: tierId } }, body })),
    onSuccess: invalidate,
  });
}
