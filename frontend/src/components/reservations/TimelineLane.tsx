import { type PointerEvent, useState } from "react";
import type { DirectionLoad, Reservation } from "@/api/reservations";
import type { SlotPick } from "./ReservationTimeline";
import { BAR_GAP, BAR_HEIGHT, ReservationBars } from "./TimelineBars";
import {
  assignLanes,
  DAY,
  formatRate,
  type LoadStep,
  labelEvery,
  loadAt,
  parseSteps,
  stepAreaPath,
  ticks,
  type Zoom,
} from "./timeline";
import "./reservations.css";

const LOAD_HEIGHT = 120;
const AXIS_HEIGHT = 22;
const LEFT = 8;
const RIGHT = 8;

const tickFormat = (zoom: Zoom) =>
  new Intl.DateTimeFormat(
    undefined,
    zoom.span > DAY
      ? { weekday: "short", day: "numeric", hour: "2-digit" }
      : {
          hour: "2-digit",
          minute: "2-digit",
        },
  );

const hoverFormat = new Intl.DateTimeFormat(undefined, {
  weekday: "short",
  hour: "2-digit",
  minute: "2-digit",
});

/** One direction's lane: the booked load against capacity, the user's reservations as bars, the time axis. */
export function Lane({
  load,
  reservations,
  start,
  end,
  zoom,
  width,
  now,
  onPick,
  highlight,
}: {
  load: DirectionLoad;
  reservations: Reservation[];
  start: number;
  end: number;
  zoom: Zoom;
  width: number;
  now: number;
  onPick: (pick: SlotPick) => void;
  highlight: { start: number; end: number } | null;
}) {
  const [hover, setHover] = useState<number | null>(null);
  const steps: LoadStep[] = parseSteps(load.steps);
  const top = Math.max(load.capacity_mbps, ...steps.map((s) => s.mbps)) * 1.1 || 1;
  const inner = width - LEFT - RIGHT;
  const x = (t: number) => LEFT + ((Math.min(Math.max(t, start), end) - start) / (end - start)) * inner;
  const y = (mbps: number) => 8 + (1 - mbps / top) * (LOAD_HEIGHT - 8);
  const bars = assignLanes(
    reservations.map((r) => ({ r, start: Date.parse(r.start), end: Date.parse(r.end) })),
  );
  const rows = Math.max(1, ...bars.map((b) => b.lane + 1));
  const barsTop = LOAD_HEIGHT + AXIS_HEIGHT;
  const height = barsTop + rows * (BAR_HEIGHT + BAR_GAP) + 4;
  const fmt = tickFormat(zoom);
  const marks = ticks(start, end, zoom.tick);
  const longest = marks.reduce((a, t) => Math.max(a, fmt.format(t).length), 0);
  const every = labelEvery((inner * zoom.tick) / (end - start), "0".repeat(longest));
  const timeAt = (clientX: number, svg: SVGSVGElement) => {
    const box = svg.getBoundingClientRect();
    return start + ((clientX - box.left - LEFT) / inner) * (end - start);
  };
  const pick = (e: PointerEvent<SVGRectElement>) => {
    const svg = e.currentTarget.ownerSVGElement;
    if (!svg) return;
    const t = Math.max(now, Math.floor(timeAt(e.clientX, svg) / zoom.slot) * zoom.slot);
    onPick({ direction: load.direction, start: t, end: t + zoom.slot });
  };
  const hoverLoad = hover != null ? loadAt(steps, hover) : null;
  const label = `${load.direction === "read" ? "Read" : "Write"}: capacity ${formatRate(load.capacity_mbps)}, bookable ${formatRate(load.bookable_mbps)}`;

  return (
    <figure className="res-lane">
      <figcaption className="res-lane__title">
        <strong>{load.direction === "read" ? "Read" : "Write"}</strong>
        <span className="muted">
          capacity {formatRate(load.capacity_mbps)} · bookable {formatRate(load.bookable_mbps)}
        </span>
        {hover != null && hoverLoad != null ? (
          <span className="res-lane__hover" aria-live="off">
            {hoverFormat.format(hover)}: {formatRate(hoverLoad)} booked,{" "}
            {formatRate(Math.max(0, load.bookable_mbps - hoverLoad))} free
          </span>
        ) : null}
      </figcaption>
      <svg
        width={width}
        height={height}
        role="img"
        aria-label={label}
        data-testid={`timeline-${load.direction}`}
        className="res-lane__svg"
      >
        <g data-axis="time">
          {marks.map((t, i) => (
            <g key={t}>
              <line x1={x(t)} x2={x(t)} y1={0} y2={height} className="res-grid" />
              {i % every === 0 ? (
                <text x={x(t) + 3} y={LOAD_HEIGHT + 15} className="res-tick">
                  {fmt.format(t)}
                </text>
              ) : null}
            </g>
          ))}
        </g>
        <path d={stepAreaPath(steps, start, end, x, y)} className="res-load" />
        <line
          x1={LEFT}
          x2={width - RIGHT}
          y1={y(load.capacity_mbps)}
          y2={y(load.capacity_mbps)}
          className="res-capacity"
        />
        <line
          x1={LEFT}
          x2={width - RIGHT}
          y1={y(load.bookable_mbps)}
          y2={y(load.bookable_mbps)}
          className="res-bookable"
        />
        {highlight ? (
          <rect
            x={x(highlight.start)}
            y={0}
            width={Math.max(2, x(highlight.end) - x(highlight.start))}
            height={LOAD_HEIGHT}
            className="res-highlight"
          />
        ) : null}
        {now >= start && now <= end ? (
          <line x1={x(now)} x2={x(now)} y1={0} y2={height} className="res-now" />
        ) : null}
        {/* the click target over the load chart: picks a slot there */}
        {/* biome-ignore lint/a11y/noStaticElementInteractions: pointer picking on a chart; the booking form below sets the same window by keyboard. */}
        <rect
          x={LEFT}
          y={0}
          width={inner}
          height={LOAD_HEIGHT}
          className="res-hit"
          data-testid={`timeline-${load.direction}-slots`}
          onPointerMove={(e) => {
            const svg = e.currentTarget.ownerSVGElement;
            if (svg) setHover(timeAt(e.clientX, svg));
          }}
          onPointerLeave={() => setHover(null)}
          onClick={pick}
        />
        <ReservationBars bars={bars} x={x} top={barsTop} />
      </svg>
    </figure>
  );
}
