import type { Planned, SpendLine } from "@/api/spend";
import { Badge, Button, type Column } from "@/components/ui";
import { formatGib, formatMoney } from "@/lib/format";
import { planSummary } from "./plan-form";
import { SPEND_LABELS, tableSpendComponents, usageLines } from "./spend-data";

/** One row per tier, bucket or user: each cost component it has, the total, the usage priced. */
export function spendColumns(groupLabel: string, groups: SpendLine[]): Array<Column<SpendLine>> {
  return [
    { id: "key", header: groupLabel, cell: (r) => <strong>{r.key}</strong> },
    ...tableSpendComponents(groups).map(
      (c): Column<SpendLine> => ({
        id: c,
        header: SPEND_LABELS[c],
        align: "end",
        cell: (r) => formatMoney(r[c]),
      }),
    ),
    {
      id: "total",
      header: "Total",
      align: "end",
      cell: (r) => <strong>{formatMoney(r.total)}</strong>,
    },
    {
      id: "usage",
      header: "Usage",
      hideOnNarrow: true,
      cell: (r) => (
        <div className="cell-stack">
          <span>{formatGib(r.gib_days)}-days</span>
          {usageLines(r).map((text) => (
            <span key={text} className="spend-note">
              {text}
            </span>
          ))}
          <span className="spend-note">priced with {r.catalogs.join(", ") || "no price sheet"}</span>
        </div>
      ),
    },
  ];
}

/** One row per bucket with a plan: planned against actual and projected, and why they differ. */
export function planColumnsFor(onEdit: (row: Planned) => void): Array<Column<Planned>> {
  return [
    {
      id: "bucket",
      header: "Bucket",
      cell: (r) => (
        <div className="cell-stack">
          <strong>{r.bucket}</strong>
          <Button
            size="sm"
            className="print-hide"
            onClick={() => onEdit(r)}
            aria-label={`Edit plan of ${r.bucket}`}
          >
            Edit plan
          </Button>
        </div>
      ),
    },
    {
      id: "planned",
      header: "Planned / month",
      align: "end",
      cell: (r) => (
        <div className="cell-stack">
          <span>{formatMoney(r.planned)}</span>
          <span className="spend-note spend-note--narrow">{planSummary(r.plan, r.planned_storage)}</span>
        </div>
      ),
    },
    {
      id: "so_far",
      header: "Actual so far",
      align: "end",
      cell: (r) => formatMoney(r.actual_so_far),
    },
    {
      id: "projected",
      header: "Projected",
      align: "end",
      cell: (r) => formatMoney(r.projected),
    },
    {
      id: "why",
      header: "Why they differ",
      cell: (r) =>
        r.diverges ? (
          <div className="cell-stack">
            <Badge tone="warning">diverges</Badge>
            {r.reasons.map((reason) => (
              <span key={reason} className="spend-note">
                {reason}
              </span>
            ))}
          </div>
        ) : (
          <Badge tone="success">on plan</Badge>
        ),
    },
  ];
}
