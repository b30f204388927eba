import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from "recharts";
import type { Report } from "@/api/pricing";
import { AXIS, ChartFrame, type Column, GRID_STROKE, Table } from "@/components/ui";
import { formatMoney } from "@/lib/format";
import {
  breakdownRows,
  COMPONENT_COLORS,
  COMPONENT_LABELS,
  formatFrequency,
  usedComponents,
} from "./chart-data";

/** Stacked bars of the monthly cost per tier by component, and the same figures as a table. */
export function BreakdownSection({ report }: { report: Report }) {
  const rows = breakdownRows(report);
  const used = usedComponents(rows);
  // an installation tier's column names the catalog class it is priced at
  const behind = new Map(
    report.tiers
      .filter((t) => t.installation_tier)
      .map((t) => [t.tier, `${t.catalog}:${t.storage_class}`] as const),
  );
  const totals = rows.map((r, i) => ({ ...r, overall: report.tiers[i]?.total.total ?? 0 }));
  // one row per tier, so a narrow card turns the table into one card per tier instead of clipping it
  const columns: Array<Column<(typeof totals)[number]>> = [
    {
      id: "tier",
      header: "Tier",
      cell: (r) => (
        <div className="cell-stack">
          <strong>{r.tier}</strong>
          {behind.has(r.tier) ? <span className="cell-sub">{behind.get(r.tier)}</span> : null}
        </div>
      ),
    },
    ...used.map(
      (c): Column<(typeof totals)[number]> => ({
        id: c,
        header: COMPONENT_LABELS[c],
        align: "end",
        cell: (r) => formatMoney(r[c]),
      }),
    ),
    {
      id: "total",
      header: "Total per month",
      align: "end",
      cell: (r) => <strong>{formatMoney(r.total)}</strong>,
    },
    {
      id: "overall",
      header: `Total over ${report.months} months`,
      align: "end",
      cell: (r) => formatMoney(r.overall),
    },
  ];
  return (
    <>
      <ChartFrame
        label={`Monthly cost per tier by component at ${formatFrequency(report.reads_per_month)} full reads per month`}
        height={Math.max(200, rows.length * 34 + 80)}
      >
        <BarChart data={rows} layout="vertical" margin={{ top: 4, right: 16, bottom: 16, left: 8 }}>
          <CartesianGrid horizontal={false} stroke={GRID_STROKE} />
          <XAxis {...AXIS} type="number" tickFormatter={(v: number) => formatMoney(v)} />
          <YAxis {...AXIS} type="category" dataKey="tier" width={170} interval={0} />
          <Tooltip formatter={(v) => formatMoney(Number(v))} />
          <Legend wrapperStyle={AXIS} />
          {used.map((c) => (
            <Bar
              key={c}
              dataKey={c}
              name={COMPONENT_LABELS[c]}
              stackId="cost"
              fill={COMPONENT_COLORS[c]}
              isAnimationActive={false}
            />
          ))}
        </BarChart>
      </ChartFrame>
      <Table
        caption="Monthly cost per tier and component, USD"
        columns={columns}
        rows={totals}
        rowKey={(r) => r.tier}
      />
    </>
  );
}
