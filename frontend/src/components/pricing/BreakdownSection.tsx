import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { Report } from "@/api/pricing";
import {
  breakdownRows,
  COMPONENT_COLORS,
  COMPONENT_LABELS,
  COMPONENTS,
  formatFrequency,
  formatUsd,
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
  return (
    <>
      <figure
        className="chart"
        aria-label={`Monthly cost per tier by component at ${formatFrequency(report.reads_per_month)} full reads per month`}
      >
        <div style={{ width: "100%", height: Math.max(200, rows.length * 34 + 80) }}>
          <ResponsiveContainer>
            <BarChart data={rows} layout="vertical" margin={{ top: 4, right: 16, bottom: 16, left: 8 }}>
              <CartesianGrid horizontal={false} stroke="#e5e9f0" />
              <XAxis type="number" tickFormatter={(v: number) => formatUsd(v)} fontSize={12} />
              <YAxis type="category" dataKey="tier" width={170} fontSize={12} interval={0} />
              <Tooltip formatter={(v) => formatUsd(Number(v))} />
              <Legend wrapperStyle={{ fontSize: 12 }} />
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
          </ResponsiveContainer>
        </div>
      </figure>
      <div className="ui-table-wrap">
        <table className="ui-table planner-table">
          <caption className="visually-hidden">Monthly cost per tier and component, USD</caption>
          <thead>
            <tr>
              <th scope="col">USD per month</th>
              {rows.map((r) => (
                <th key={r.tier} scope="col" className="num">
                  {r.tier}
                  {behind.has(r.tier) ? <span className="cell-sub">{behind.get(r.tier)}</span> : null}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {COMPONENTS.map((c) => (
              <tr key={c}>
                <th scope="row">{COMPONENT_LABELS[c]}</th>
                {rows.map((r) => (
                  <td key={r.tier} className="num">
                    {formatUsd(r[c])}
                  </td>
                ))}
              </tr>
            ))}
            <tr className="planner-table__total">
              <th scope="row">Total per month</th>
              {rows.map((r) => (
                <td key={r.tier} className="num" data-tier={r.tier}>
                  {formatUsd(r.total)}
                </td>
              ))}
            </tr>
            <tr>
              <th scope="row">Total over {report.months} months</th>
              {report.tiers.map((t) => (
                <td key={t.tier} className="num">
                  {formatUsd(t.total.total)}
                </td>
              ))}
            </tr>
          </tbody>
        </table>
      </div>
    </>
  );
}
