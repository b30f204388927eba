import type { CatalogSummary, Report } from "@/api/pricing";
import { Badge, Card } from "@/components/ui";
import { BreakdownSection } from "./BreakdownSection";
import { BreakEvenSummary } from "./BreakEvenSummary";
import { CostCurveChart } from "./CostCurveChart";
import { formatFrequency } from "./chart-data";
import { HybridResult } from "./HybridResult";
import { LifecycleResult } from "./LifecycleResult";
import "./pricing.css";

/** The priced scenario: the cost curves with their break-even points, the breakdown, lifecycle and hybrid
 * results, and the catalogs the prices come from. */
export function PlannerReport({
  report,
  colors,
  updating,
  catalogs,
}: {
  report: Report;
  colors: Map<string, string>;
  /** A newer scenario is being priced. */
  updating: boolean;
  catalogs: readonly CatalogSummary[];
}) {
  return (
    <>
      <Card
        title="Monthly cost against access frequency"
        description={`Break-even points are marked; the scenario reads the report ${formatFrequency(report.reads_per_month)} times a month.`}
        actions={updating ? <Badge tone="neutral">updating…</Badge> : null}
      >
        <CostCurveChart report={report} colors={colors} />
        <BreakEvenSummary report={report} />
      </Card>
      <Card
        title="Cost breakdown per tier"
        description={`USD per month at ${formatFrequency(report.reads_per_month)} full reads per month.`}
        className="print-break-before"
      >
        <BreakdownSection report={report} />
      </Card>
      {report.lifecycle ? (
        <Card
          title="Lifecycle simulation"
          description="Cost per month of the policy against keeping all report hot."
        >
          <LifecycleResult lifecycle={report.lifecycle} />
        </Card>
      ) : null}
      {report.hybrid.length ? (
        <Card
          title="Hybrid plan"
          description="Annual totals of the split against keeping all report in one tier."
        >
          <HybridResult report={report} colors={colors} catalogs={catalogs} />
        </Card>
      ) : null}
      {report.notes.length ? (
        <ul className="plain-list muted">
          {report.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      ) : null}
      <p className="muted catalog-note">
        Prices:{" "}
        {report.catalogs
          .map((c) => `${c.id} (${c.valid_from}${c.has_estimates ? ", some figures estimated" : ""})`)
          .join("; ")}
      </p>
    </>
  );
}
