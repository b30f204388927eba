// Shapes the spend answer for the chart and the tables.
import type { Spend, SpendLine } from "@/api/spend";
import { COMPONENT_COLORS, COMPONENT_LABELS } from "@/components/pricing/chart-data";
import { formatCount, formatSize } from "@/lib/format";

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
    `${formatCount(l.read_requests)} GET (${formatSize(l.read_bytes)}) · ${formatCount(l.write_requests)} PUT (${formatSize(l.write_bytes)})`,
  ];
  // where the reads were billed as egress: each tier's destination (Settings › Tiers)
  if (l.egress_explained) lines.push(l.egress_explained);
  const other = [
    l.head_requests ? `${formatCount(l.head_requests)} HEAD` : "",
    l.list_requests ? `${formatCount(l.list_requests)} LIST` : "",
    l.other_requests ? `${formatCount(l.other_requests)} other` : "",
  ].filter(Boolean);
  if (other.length) lines.push(other.join(" · "));
  if (l.restore_requests)
    lines.push(`${formatCount(l.restore_requests)} restored (${formatSize(l.restored_bytes)})`);
  if (l.transitions) lines.push(`${formatCount(l.transitions)} transitioned`);
  return lines;
}
