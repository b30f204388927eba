import type { Report } from "@/api/pricing";
import { formatCount, formatGib } from "@/lib/format";
import { formatFrequency } from "./chart-data";

/** Printed reports start with their inputs and the price catalogs (versions, dates, sources) used. */
export function PrintSummary({ report, name }: { report: Report; name: string | null }) {
  const s = report.scenario as Record<string, unknown>;
  const tiers = report.tiers.map((t) => t.tier).join(", ");
  return (
    <section className="print-only print-summary" aria-hidden="true">
      <h2>{name ? `Cost report: ${name}` : "Cost report"}</h2>
      <dl>
        <dt>Data</dt>
        <dd>
          {s.volume_gib == null ? "—" : formatGib(Number(s.volume_gib))}
          {s.objects != null ? ` in ${formatCount(Number(s.objects))} objects` : ""}
        </dd>
        <dt>Access</dt>
        <dd>
          {formatFrequency(report.reads_per_month)} full reads per month,{" "}
          {Math.round(Number(s.read_fraction) * 100)} % of the data each; downloads to {String(s.egress)} (
          {Math.round(Number(s.egress_share) * 100)} %)
        </dd>
        <dt>Tiers</dt>
        <dd>{tiers}</dd>
        <dt>Period</dt>
        <dd>{report.months} months; money in USD</dd>
        <dt>Price catalogs</dt>
        <dd>
          {report.catalogs.map((c) => (
            <div key={c.id}>
              {c.id}: {c.provider} {c.region}, prices of {c.valid_from}
              {c.has_estimates ? " (some figures estimated)" : ""} — {c.source.join("; ")}
            </div>
          ))}
        </dd>
      </dl>
    </section>
  );
}
