import { useQueries } from "@tanstack/react-query";
import { type SavedScenario, savedReportQueryOptions } from "@/api/pricing";
import { Card, QueryState } from "@/components/ui";
import { formatMoney } from "@/lib/format";
import { formatFrequency } from "./chart-data";

/** Saved scenarios side by side: each tier's monthly total, the cheapest tier and the break-evens. */
export function CompareScenarios({ scenarios }: { scenarios: SavedScenario[] }) {
  const reports = useQueries({ queries: scenarios.map((s) => savedReportQueryOptions(s.id)) });
  const failed = reports.find((r) => r.isError);
  const pending = reports.some((r) => r.isPending);
  if (failed || pending) {
    const all = { isPending: !failed, isError: Boolean(failed), error: failed?.error, data: undefined };
    return (
      <QueryState
        query={all}
        loading="Evaluating the scenarios…"
        errorTitle="Could not evaluate a scenario"
        retry={false}
      />
    );
  }
  const data = reports.map((r) => r.data).filter((r) => r !== undefined);
  const tiers = [...new Set(data.flatMap((r) => r.tiers.map((t) => t.tier)))];
  return (
    <Card
      title="Side by side"
      description="USD per month at each scenario's own access frequency."
      padded={false}
    >
      <div className="ui-table-wrap">
        <table className="ui-table planner-table" aria-label="Scenarios side by side">
          <thead>
            <tr>
              <th scope="col">Tier</th>
              {scenarios.map((s) => (
                <th scope="col" key={s.id} className="num">
                  {s.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            <tr>
              <th scope="row">Full reads per month</th>
              {data.map((r, i) => (
                <td key={scenarios[i]?.id} className="num">
                  {formatFrequency(r.reads_per_month)}
                </td>
              ))}
            </tr>
            {tiers.map((tier) => (
              <tr key={tier}>
                <th scope="row">{tier}</th>
                {data.map((r, i) => {
                  const t = r.tiers.find((x) => x.tier === tier);
                  return (
                    <td key={scenarios[i]?.id} className="num">
                      {t ? formatMoney(t.monthly.total) : "—"}
                    </td>
                  );
                })}
              </tr>
            ))}
            <tr className="planner-table__total">
              <th scope="row">Cheapest</th>
              {data.map((r, i) => {
                const best = [...r.tiers].sort((a, b) => a.monthly.total - b.monthly.total)[0];
                return (
                  <td key={scenarios[i]?.id} className="num">
                    {best ? `${best.tier} (${formatMoney(best.monthly.total)})` : "—"}
                  </td>
                );
              })}
            </tr>
            <tr>
              <th scope="row">Break-even points</th>
              {data.map((r, i) => (
                <td key={scenarios[i]?.id} className="num">
                  {r.break_even
                    .map(
                      (b) =>
                        `${b.cheaper_below} < ${b.cheaper_above} below ${formatFrequency(b.reads_per_month)}`,
                    )
                    .join("; ") || "—"}
                </td>
              ))}
            </tr>
          </tbody>
        </table>
      </div>
    </Card>
  );
}
