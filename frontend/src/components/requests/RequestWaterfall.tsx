import type { RequestTrace } from "@/api/requests";
import { formatMs, slowestPhase, waterfallBars } from "./waterfall";
import "./requests.css";

const PHASE_HELP: Record<string, string> = {
  queue: "waited for a free slot of the gateway (backpressure)",
  headers: "request line and headers parsed",
  auth: "signature checked (SigV4) and caller looked up",
  lookup: "bucket and object found in the catalog",
  admission: "reservation or best-effort flow admitted",
  tier_open: "tier opened up to the first response byte",
  limiter_wait: "waits for the flow's rate (spread over the transfer, shown together)",
  transfer: "body bytes moved",
  commit: "bytes made durable and the catalog row written",
  response: "answer sent",
};

/** One request's phases on a time axis: where its time went. */
export function RequestWaterfall({ trace }: { trace: RequestTrace }) {
  const bars = waterfallBars(trace.phases, trace.total_ms);
  const slowest = slowestPhase(trace.phases);
  return (
    <div className="requests-waterfall">
      <p className="requests-waterfall__summary">
        <strong>{trace.operation}</strong> {trace.bucket ? `in ${trace.bucket}` : null} answered{" "}
        {trace.status} in {formatMs(trace.total_ms)}
        {slowest ? (
          <>
            {" "}
            — most of it in <strong>{slowest.name}</strong> ({formatMs(slowest.duration_ms)})
          </>
        ) : null}
      </p>
      <ol className="requests-waterfall__rows" aria-label={`Phases of request ${trace.request_id}`}>
        {bars.map((bar) => (
          <li key={bar.name} className="requests-waterfall__row">
            <span className="requests-waterfall__name" title={PHASE_HELP[bar.name] ?? bar.name}>
              {bar.name.replace("_", " ")}
            </span>
            <span className="requests-waterfall__track">
              <span
                className={`requests-waterfall__bar requests-waterfall__bar--${bar.name}`}
                style={{ marginLeft: `${bar.left}%`, width: `${bar.width}%` }}
              />
            </span>
            <span className="requests-waterfall__time">
              {formatMs(bar.durationMs)}{" "}
              <span className="requests-waterfall__share">{(bar.share * 100).toFixed(0)} %</span>
            </span>
          </li>
        ))}
      </ol>
    </div>
  );
}
