import { keepPreviousData, queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { ApiError, api, errorMessage, type Schemas, unwrap } from "../client";
import { spendKeys } from "../spend";

export type ScenarioBody = Schemas["Scenario"];
export type Report = Schemas["ReportOut"];
export type TierReport = Schemas["TierReportOut"];
export type Breakdown = Schemas["BreakdownOut"];
export type CatalogSummary = Schemas["CatalogSummary"];
export type Catalog = Schemas["Catalog-Output"];
export type StorageClass = Schemas["StorageClass-Output"];
export type SavedScenario = Schemas["ScenarioOut"];
export type InstallationTier = Schemas["InstallationTierOut"];
export type PlanUsage = Schemas["PlanUsageOut"];

export const pricingKeys = {
  all: ["pricing"] as const,
  catalogs: () => [...pricingKeys.all, "catalogs"] as const,
  catalog: (id: string) => [...pricingKeys.all, "catalog", id] as const,
  installationTiers: () => [...pricingKeys.all, "installation-tiers"] as const,
  scenarios: () => [...pricingKeys.all, "scenarios"] as const,
  scenario: (id: number) => [...pricingKeys.all, "scenario", id] as const,
  shared: (token: string) => [...pricingKeys.all, "shared", token] as const,
  report: (body: ScenarioBody) => [...pricingKeys.all, "report", body] as const,
  savedReport: (id: number) => [...pricingKeys.all, "saved-report", id] as const,
  fromMyData: (catalog: string) => [...pricingKeys.all, "from-my-data", catalog] as const,
  planUsage: (body: ScenarioBody) => [...pricingKeys.all, "plan-usage", body] as const,
};

export const catalogsQueryOptions = () =>
  queryOptions({
    queryKey: pricingKeys.catalogs(),
    queryFn: () => unwrap(api.GET("/api/pricing/catalogs")),
    staleTime: 5 * 60_000,
  });

export const catalogQueryOptions = (id: string) =>
  queryOptions({
    queryKey: pricingKeys.catalog(id),
    queryFn: () =>
      unwrap(api.GET("/api/pricing/catalogs/{catalog_id}", { params: { path: { catalog_id: id } } })),
    staleTime: 5 * 60_000,
  });

/** This installation's tiers as planner candidates, with the catalog class behind each or why it has none. */
export const installationTiersQueryOptions = () =>
  queryOptions({
    queryKey: pricingKeys.installationTiers(),
    queryFn: () => unwrap(api.GET("/api/pricing/installation-tiers")),
    staleTime: 60_000,
  });

export const scenariosQueryOptions = () =>
  queryOptions({
    queryKey: pricingKeys.scenarios(),
    queryFn: () => unwrap(api.GET("/api/pricing/scenarios")),
  });

export const scenarioQueryOptions = (id: number) =>
  queryOptions({
    queryKey: pricingKeys.scenario(id),
    queryFn: () =>
      unwrap(api.GET("/api/pricing/scenarios/{scenario_id}", { params: { path: { scenario_id: id } } })),
  });

export const sharedScenarioQueryOptions = (token: string) =>
  queryOptions({
    queryKey: pricingKeys.shared(token),
    queryFn: () => unwrap(api.GET("/api/pricing/shared/{token}", { params: { path: { token } } })),
  });

/** The report of a what-if scenario; the previous report stays on screen while the next one loads. */
export const reportQueryOptions = (body: ScenarioBody | null) =>
  queryOptions({
    queryKey: pricingKeys.report(body as ScenarioBody),
    queryFn: () => unwrap(api.POST("/api/pricing/evaluate", { body: body as ScenarioBody })),
    enabled: body !== null,
    placeholderData: keepPreviousData,
    staleTime: 60_000,
    retry: false,
  });

export const savedReportQueryOptions = (id: number) =>
  queryOptions({
    queryKey: pricingKeys.savedReport(id),
    queryFn: () =>
      unwrap(
        api.GET("/api/pricing/scenarios/{scenario_id}/report", { params: { path: { scenario_id: id } } }),
      ),
  });

export async function fetchFromMyData(catalog: string) {
  return unwrap(api.GET("/api/pricing/from-my-data", { params: { query: { catalog } } }));
}

function useInvalidateScenarios() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: pricingKeys.scenarios() });
}

export function useCreateScenario() {
  const invalidate = useInvalidateScenarios();
  return useMutation({
    mutationFn: (input: { name: string; body: ScenarioBody }) =>
      unwrap(api.POST("/api/pricing/scenarios", { body: input })),
    onSuccess: invalidate,
  });
}

export function useUpdateScenario() {
  const invalidate = useInvalidateScenarios();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: number; name?: string; body?: ScenarioBody }) =>
      unwrap(
        api.PATCH("/api/pricing/scenarios/{scenario_id}", {
          params: { path: { scenario_id: input.id } },
          body: { name: input.name ?? null, body: input.body ?? null },
        }),
      ),
    onSuccess: (saved) => {
      queryClient.removeQueries({ queryKey: pricingKeys.savedReport(saved.id) });
      return invalidate();
    },
  });
}

export function useDeleteScenario() {
  const invalidate = useInvalidateScenarios();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/pricing/scenarios/{scenario_id}", { params: { path: { scenario_id: id } } })),
    onSuccess: invalidate,
  });
}

export function useDuplicateScenario() {
  const invalidate = useInvalidateScenarios();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(
        api.POST("/api/pricing/scenarios/{scenario_id}/duplicate", { params: { path: { scenario_id: id } } }),
      ),
    onSuccess: invalidate,
  });
}

export function useShareScenario() {
  const invalidate = useInvalidateScenarios();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(
        api.POST("/api/pricing/scenarios/{scenario_id}/share", { params: { path: { scenario_id: id } } }),
      ),
    onSuccess: invalidate,
  });
}

export function useUnshareScenario() {
  const invalidate = useInvalidateScenarios();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(
        api.DELETE("/api/pricing/scenarios/{scenario_id}/share", { params: { path: { scenario_id: id } } }),
      ),
    onSuccess: invalidate,
  });
}

export function useUploadCatalog() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (file: File) => {
      const form = new FormData();
      form.append("file", file);
      return unwrap(
        api.POST("/api/pricing/catalogs/upload", {
          // multipart: the browser sets the boundary; openapi-fetch must not JSON-encode the form
          body: form as unknown as { file: string },
          bodySerializer: (b: unknown) => b as FormData,
        }),
      );
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: pricingKeys.catalogs() }),
  });
}

/** The scenario's report as CSV, saved by the browser under `name`.csv. */
export async function downloadReportCsv(body: ScenarioBody, name: string): Promise<void> {
  const { data, error, response } = await api.POST("/api/pricing/report.csv", { body, parseAs: "blob" });
  if (!response.ok || !(data instanceof Blob)) {
    throw new ApiError(response.status, errorMessage(error, "the CSV export failed"), error);
  }
  const url = URL.createObjectURL(data);
  const link = document.createElement("a");
  link.href = url;
  link.download = `${name.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") || "cost-report"}.csv`;
  document.body.append(link);
  link.click();
  link.remove();
  // the click has handed the blob to the download; release it on the next tick
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** The scenario's month as a bucket's planned usage (reads, requests, restores), with how each figure follows. */
export const planUsageQueryOptions = (body: ScenarioBody) =>
  queryOptions({
    queryKey: pricingKeys.planUsage(body),
    queryFn: () => unwrap(api.POST("/api/pricing/plan-usage", { body })),
    retry: false,
  });

/** A bucket's saved plan, or null when it has none (the API's 404 for one of the caller's buckets: it plans
 * storage only). Kept under the Spend keys, so saving a plan there or here refreshes it. */
export const bucketPlanQueryOptions = (bucket: string) =>
  queryOptions({
    queryKey: [...spendKeys.all, "plan", bucket] as const,
    queryFn: async () => {
      const { data, error, response } = await api.GET("/api/spend/plans/{bucket}", {
        params: { path: { bucket } },
      });
      if (response.status === 404) return null;
      return unwrap(Promise.resolve({ data, error, response }));
    },
    enabled: bucket !== "",
    retry: false,
  });
