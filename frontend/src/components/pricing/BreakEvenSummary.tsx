import type { Report } from "@/api/pricing";
import { formatDuration, formatMoney } from "@/lib/format";
import { adjacentPairs, COMPONENT_LABELS, formatFrequency, type RankedPair, ranking } from "./chart-data";

function PairLine({ pair }: { pair: RankedPair }) {
  const { cheaper, costlier, crossings, equal } = pair;
  if (!crossings.length) {
    return (
      <li>
        <strong>{cheaper}</strong> {equal ? "costs the same as" : "is cheaper at every frequency than"}{" "}
        <strong>{costlier}</strong>
      </li>
    );
  }
  return (
    <>
      {crossings.map((m) => (
        <li key={`${m.cheaperBelow}|${m.cheaperAbove}|${m.readsPerMonth}`}>
          <strong>{m.cheaperBelow}</strong> is cheaper than <strong>{m.cheaperAbove}</strong> below{" "}
          <span className="mono">{formatFrequency(m.readsPerMonth)}</span> full reads a month
        </li>
      ))}
    </>
  );
}

/** The answer at the scenario's frequency: the options ranked by monthly cost, and where each would swap places
 * with its neighbour; the cheapest option per frequency band stays folded away. */
export function BreakEvenSummary({ report }: { report: Report }) {
  const ranks = ranking(report);
  const pairs = adjacentPairs(report, ranks);
  const [first, ...rest] = ranks;
  if (!first) return null;
  const shown = rest.slice(0, 3);
  return (
    <div className="break-even-summary">
      <div>
        <h3>Cheapest at {formatFrequency(report.reads_per_month)} full reads a month</h3>
        <p className="ranked-answer" data-testid="ranked-answer">
          Cheapest at your access: <strong>{first.tier}</strong> ({formatMoney(first.monthly)}/month)
          {shown.length ? ", then " : "."}
          {shown.map((r, i) => (
            <span key={r.tier}>
              {i ? ", " : ""}
              {r.tier} (+{formatMoney(r.more)})
            </span>
          ))}
          {rest.length > shown.length ? "…" : shown.length ? "." : ""}
        </p>
        <ol className="plain-list ranked-list" aria-label="Options by monthly cost">
          {ranks.map((r) => (
            <li key={r.tier}>
              <strong>{r.tier}</strong>: {formatMoney(r.monthly)}/month
              {r.more > 0 ? <span className="muted"> (+{formatMoney(r.more)})</span> : null}
              {r.dominant ? ` · mostly ${COMPONENT_LABELS[r.dominant].toLowerCase()}` : ""}
              {r.restoreHours != null ? ` · restore ≈ ${formatDuration(r.restoreHours * 3600)}` : ""}
            </li>
          ))}
        </ol>
      </div>
      <div>
        <h3>Where neighbours swap places</h3>
        {pairs.length ? (
          <ul className="plain-list" aria-label="Break-even points">
            {pairs.map((p) => (
              <PairLine key={`${p.cheaper}|${p.costlier}`} pair={p} />
            ))}
          </ul>
        ) : (
          <p className="muted">One option only: nothing to compare.</p>
        )}
        <details className="planner-form__more">
          <summary>Cheapest option at every frequency ({report.cheapest.length} bands)</summary>
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
        </details>
      </div>
    </div>
  );
}
