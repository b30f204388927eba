import { Bar, BarChart, CartesianGrid, Cell, Tooltip, XAxis, YAxis } from "recharts";
import type { CatalogSummary, Report } from "@/api/pricing";
import { AXIS, ChartFrame, GRID_STROKE } from "@/components/ui";
import { formatMoney } from "@/lib/format";
import { tierRefLabel } from "./scenario-form";

/** Annual totals of each hybrid plan next to keeping all data in one tier; parts name their catalog as the
 * catalog dropdown does. */
export function HybridResult({
  report,
  colors,
  catalogs = [],
}: {
  report: Report;
  colors: Map<string, string>;
  catalogs?: readonly CatalogSummary[];
}) {
  const rows = [
    ...report.hybrid.map((h) => ({ name: h.name, annual: h.annual_total, hybrid: true })),
    ...report.tiers.map((t) => ({ name: `all in ${t.tier}`, annual: t.annual, hybrid: false, tier: t.tier })),
  ];
  return (
    <>
      <ChartFrame
        label="Annual cost of hybrid plans and single tiers, USD"
        height={Math.max(180, rows.length * 34 + 48)}
      >
        <BarChart data={rows} layout="vertical" margin={{ top: 4, right: 16, bottom: 16, left: 8 }}>
          <CartesianGrid horizontal={false} stroke={GRID_STROKE} />
          <XAxis {...AXIS} type="number" tickFormatter={(v: number) => formatMoney(v)} />
          <YAxis {...AXIS} type="category" dataKey="name" width={200} interval={0} />
          <Tooltip formatter={(v) => [formatMoney(Number(v)), "per year"]} />
          <Bar dataKey="annual" name="USD per year" isAnimationActive={false}>
            {rows.map((r) => (
              <Cell key={r.name} fill={r.hybrid ? "#111827" : (colors.get(r.name.slice(7)) ?? "#94a3b8")} />
            ))}
          </Bar>
        </BarChart>
      </ChartFrame>
      {report.hybrid.map((h) => (
        <div key={h.name} className="ui-table-wrap">
          <table className="ui-table planner-table">
            <caption>{h.name}</caption>
            <thead>
              <tr>
                <th scope="col">Part</th>
                <th scope="col" className="num">
                  Data
                </th>
                <th scope="col" className="num">
                  Downloads
                </th>
                <th scope="col" className="num">
                  USD per month
                </th>
              </tr>
            </thead>
            <tbody>
              {h.parts.map((p) => (
                <tr key={p.tier}>
                  <th scope="row">{tierRefLabel(p.tier, catalogs)}</th>
                  <td className="num">{Math.round(p.data_share * 100)} %</td>
                  <td className="num">{Math.round(p.read_share * 100)} %</td>
                  <td className="num">{formatMoney(p.monthly.total)}</td>
                </tr>
              ))}
              <tr className="planner-table__total">
                <th scope="row">Per year</th>
                <td />
                <td />
                <td className="num">{formatMoney(h.annual_total)}</td>
              </tr>
            </tbody>
          </table>
        </div>
      ))}
    </>
  );
}
