// Shapes the spend answer for the chart and the tables.
import type { Spend, SpendLine } from "@/api/spend";
import { COMPONENT_COLORS, COMPONENT_LABELS, formatUsd } from "@/components/pricing/chart-data";

export const SPEND_COMPONENTS = [
  "storage",
  "requests",
  "retrieval",
  "egress",
  "restores",
  "restored_copy",
  "lifecycle",
  "early_deletion",
] as const;
export type SpendComponent = (typeof SPEND_COMPONENTS)[number];

export const SPEND_LABELS: Record<SpendComponent, string> = {
  storage: COMPONENT_LABELS.storage,
  requests: COMPONENT_LABELS.requests,
  retrieval: COMPONENT_LABELS.retrieval,
  egress: COMPONENT_LABELS.egress,
  restores: "Restores",
  restored_copy: COMPONENT_LABELS.restored_copy,
  lifecycle: "Lifecycle transitions",
  early_deletion: COMPONENT_LABELS.early_deletion,
};

export const SPEND_COLORS: Record<SpendComponent, string> = {
  storage: COMPONENT_COLORS.storage,
  requests: COMPONENT_COLORS.requests,
  retrieval: COMPONENT_COLORS.retrieval,
  egress: COMPONENT_COLORS.egress,
  restores: COMPONENT_COLORS.restore,
  restored_copy: COMPONENT_COLORS.restored_copy,
  lifecycle: COMPONENT_COLORS.monitoring,
  early_deletion: COMPONENT_COLORS.early_deletion,
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

/** The month's table columns: storage always, other components where a line costs anything. */
export function tableSpendComponents(lines: SpendLine[]): SpendComponent[] {
  return SPEND_COMPONENTS.filter((c) => c === "storage" || lines.some((l) => l[c] > 0));
}

/** A line's metered requests, restores and transitions in words, one short line per kind of activity. */
export function usageLines(l: SpendLine): string[] {
  const lines = [
    `${l.read_requests} GET (${formatBytes(l.read_bytes)}) · ${l.write_requests} PUT (${formatBytes(l.write_bytes)})`,
  ];
  // where the reads were billed as egress: each tier's destination (Settings › Tiers)
  if (l.egress_explained) lines.push(l.egress_explained);
  const other = [
    l.head_requests ? `${l.head_requests} HEAD` : "",
    l.list_requests ? `${l.list_requests} LIST` : "",
    l.other_requests ? `${l.other_requests} other` : "",
  ].filter(Boolean);
  if (other.length) lines.push(other.join(" · "));
  if (l.restore_requests) lines.push(`${l.restore_requests} restored (${formatBytes(l.restored_bytes)})`);
  if (l.transitions) lines.push(`${l.transitions} transitioned`);
  return lines;
}
