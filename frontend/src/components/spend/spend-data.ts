// Shapes the spend answer for the chart and the tables.
import type { Spend } from "@/api/spend";
import { COMPONENT_COLORS, COMPONENT_LABELS, formatUsd } from "@/components/pricing/chart-data";

export const SPEND_COMPONENTS = ["storage", "requests", "retrieval", "egress", "lifecycle"] as const;
export type SpendComponent = (typeof SPEND_COMPONENTS)[number];

export const SPEND_LABELS: Record<SpendComponent, string> = {
  storage: COMPONENT_LABELS.storage,
  requests: COMPONENT_LABELS.requests,
  retrieval: COMPONENT_LABELS.retrieval,
  egress: COMPONENT_LABELS.egress,
  lifecycle: "Lifecycle moves",
};

export const SPEND_COLORS: Record<SpendComponent, string> = {
  storage: COMPONENT_COLORS.storage,
  requests: COMPONENT_COLORS.requests,
  retrieval: COMPONENT_COLORS.retrieval,
  egress: COMPONENT_COLORS.egress,
  lifecycle: COMPONENT_COLORS.early_deletion,
};

export { formatUsd };

/** Bytes as a short decimal figure with its unit (MB = 10^6 bytes, as the dashboard's rates). */
export function formatBytes(bytes: number): string {
  const units = ["B", "kB", "MB", "GB", "TB", "PB"];
  let value = bytes;
  let i = 0;
  while (value >= 1000 && i < units.length - 1) {
    value /= 1000;
    i += 1;
  }
  return `${i === 0 ? value : value.toFixed(value >= 100 ? 0 : 1)} ${units[i]}`;
}

/** Share of the month gone, for the forecast's label. */
export function monthProgress(spend: Spend): string {
  const share = spend.days_in_month ? spend.days_elapsed / spend.days_in_month : 0;
  return `${Math.round(Math.min(1, share) * 100)} % of the month`;
}

/** The history rows the stacked bar chart draws (components with any cost only). */
export function usedSpendComponents(spend: Spend): SpendComponent[] {
  return SPEND_COMPONENTS.filter((c) => spend.history.some((m) => m[c] > 0));
}
