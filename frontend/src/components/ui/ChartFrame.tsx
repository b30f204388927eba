import type { ReactElement, ReactNode } from "react";
import { ResponsiveContainer } from "recharts";
import { cx } from "./cx";

/** The axes' look, shared by every chart: spread on `<XAxis>` and `<YAxis>`. */
export const AXIS = { fontSize: 12 } as const;

/** The grid's line colour; dashed grids add `strokeDasharray`. */
export const GRID_STROKE = "#e5e9f0";

/** An axis title: under the x axis, or turned along the y axis. */
export function axisLabel(value: string, side: "bottom" | "left" = "bottom", offset?: number) {
  const at =
    side === "left" ? { angle: -90, position: "insideLeft" as const } : { position: "insideBottom" as const };
  return { value, ...at, ...(offset === undefined ? {} : { offset }), fontSize: AXIS.fontSize };
}

export interface LegendItem {
  label: ReactNode;
  color: string;
  /** Defaults to the label when that is text. */
  key?: string;
}

export function ChartLegend({ items, children }: { items: LegendItem[]; children?: ReactNode }) {
  return (
    <figcaption className="chart-legend">
      {items.map((item) => (
        <span key={item.key ?? String(item.label)} className="chart-legend__item">
          <span className="chart-legend__swatch" style={{ background: item.color }} aria-hidden="true" />
          {item.label}
        </span>
      ))}
      {children}
    </figcaption>
  );
}

export interface ChartFrameProps {
  /** The chart's name for assistive technology (a figure's, or an image's with `as="img"`). */
  label?: string;
  /** A visible title above the chart; it names the figure when there is no `label`. */
  title?: ReactNode;
  height: number;
  /** "img" for a chart read as one picture (no caption of its own). */
  as?: "figure" | "img";
  className?: string;
  /** The class of the box the chart fills. */
  bodyClassName?: string;
  testId?: string;
  /** Controls above the chart (what it shows). */
  controls?: ReactNode;
  /** Shown in place of the chart, e.g. when there is nothing to draw. */
  placeholder?: ReactNode;
  legend?: LegendItem[];
  /** Below the chart, after the legend's items; without a legend, in a muted caption. */
  caption?: ReactNode;
  /** One recharts chart (LineChart, BarChart, ComposedChart…). */
  children: ReactElement;
}

/** The frame of every recharts chart: its name, its box and the container that sizes it, its legend. */
export function ChartFrame({
  label,
  title,
  height,
  as = "figure",
  className,
  bodyClassName,
  testId,
  controls,
  placeholder,
  legend,
  caption,
  children,
}: ChartFrameProps) {
  const body = placeholder ?? (
    <div className={bodyClassName} style={{ width: "100%", height }}>
      <ResponsiveContainer>{children}</ResponsiveContainer>
    </div>
  );
  if (as === "img") {
    return (
      <div className={className} role="img" aria-label={label} data-testid={testId}>
        {body}
      </div>
    );
  }
  return (
    <figure className={cx("chart", className)} aria-label={label} data-testid={testId}>
      {title ? <figcaption>{title}</figcaption> : null}
      {controls}
      {body}
      {legend ? (
        <ChartLegend items={legend}>{caption}</ChartLegend>
      ) : caption ? (
        <figcaption className="muted">{caption}</figcaption>
      ) : null}
    </figure>
  );
}
