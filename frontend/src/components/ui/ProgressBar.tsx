import type { ReactNode } from "react";
import { cx } from "./cx";

export interface ProgressBarProps {
  /** Accessible name, e.g. "hot-disk used". */
  label: string;
  value: number;
  max: number;
  /** What a screen reader announces instead of a bare percentage, e.g. "12 GiB of 100 GiB". */
  valueText?: string;
  /** Visible caption under the bar. */
  caption?: ReactNode;
  /** Fills turn amber and red from these shares, for capacities; progress of work stays blue. */
  thresholds?: { warning: number; danger: number } | null;
  /** "neutral" for a share that is not a limit (e.g. a tier's part of all data). */
  tone?: "default" | "neutral";
}

export function ProgressBar({
  label,
  value,
  max,
  valueText,
  caption,
  thresholds = { warning: 0.75, danger: 0.9 },
  tone: baseTone = "default",
}: ProgressBarProps) {
  const share = max > 0 ? Math.min(1, Math.max(0, value / max)) : 0;
  const tone =
    thresholds && share >= thresholds.danger
      ? "danger"
      : thresholds && share >= thresholds.warning
        ? "warning"
        : baseTone === "neutral"
          ? "neutral"
          : "ok";
  return (
    <div className="ui-progress">
      <div
        className="ui-progress__track"
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={Math.min(value, max)}
        aria-valuetext={valueText}
      >
        <div
          className={cx("ui-progress__fill", `ui-progress__fill--${tone}`)}
          // a sliver stays visible for tiny non-zero shares
          style={{ width: `${(share * 100).toFixed(2)}%`, minWidth: share > 0 ? 4 : 0 }}
        />
      </div>
      {caption ? <div className="ui-progress__caption">{caption}</div> : null}
    </div>
  );
}
