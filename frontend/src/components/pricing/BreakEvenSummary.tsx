import type { Report } from "@/api/pricing";
import { formatFrequency } from "./chart-data";

/** Break-even frequencies in words, tiers that always win, and the cheapest tier per frequency band. */
export function BreakEvenSummary({ report }: { report: Report }) {
  return (
    <div className="break-even-summary">
      <div>
        <h3>Break-even points</h3>
        {report.break_even.length ? (
          <ul className="plain-list" aria-label="Break-even points">
            {report.break_even.map((b) => (
              <li key={`${b.cheaper_below}|${b.cheaper_above}|${b.reads_per_month}`}>
                <strong>{b.cheaper_below}</strong> is cheaper than <strong>{b.cheaper_above}</strong> below{" "}
                <span className="mono">{formatFrequency(b.reads_per_month)}</span> full reads a month
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">No two tiers cross: one is cheaper at every frequency.</p>
        )}
        {report.dominance.length ? (
          <ul className="plain-list" aria-label="Tiers that are never dearer">
            {report.dominance.map((d) => (
              <li key={`${d.cheaper}|${d.costlier}`}>
                <strong>{d.cheaper}</strong>{" "}
                {d.equal ? "costs the same as" : "is cheaper at every frequency than"}{" "}
                <strong>{d.costlier}</strong>
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      <div>
        <h3>Cheapest tier by access frequency</h3>
        <ol className="plain-list" aria-label="Cheapest tier by frequency band">
          {report.cheapest.map((band) => (
            <li key={`${band.from}-${band.tier}`}>
              <span className="mono">
                {formatFrequency(band.from)} – {band.to == null ? "∞" : formatFrequency(band.to)}
              </span>{" "}
              reads/month: <strong>{band.tier}</strong>
            </li>
          ))}
        </ol>
      </div>
    </div>
  );
}
