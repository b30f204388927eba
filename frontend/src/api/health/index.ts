import { queryOptions } from "@tanstack/react-query";
import { api, errorMessage } from "../client";

/**
 * The health answer. The endpoint returns a bare JSON response (no response model in the schema),
 * so its shape is written down here; 503 carries the same body with status "degraded".
 */
export interface Health {
  status: "ok" | "degraded" | string;
  database: string;
  broker: string;
  version?: string;
}

export const healthKeys = {
  all: ["health"] as const,
  detail: () => [...healthKeys.all, "detail"] as const,
};

function isHealth(body: unknown): body is Health {
  return !!body && typeof body === "object" && "status" in body && "database" in body && "broker" in body;
}

export const healthQueryOptions = () =>
  queryOptions({
    queryKey: healthKeys.detail(),
    queryFn: async (): Promise<Health> => {
      const { data, error, response } = await api.GET("/api/health");
      const body: unknown = response.ok ? data : error;
      if (isHealth(body)) return body;
      throw new Error(errorMessage(body, `health check answered ${response.status}`));
    },
    refetchInterval: 15_000,
  });
