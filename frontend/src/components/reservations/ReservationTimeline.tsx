import { useQuery } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type PointerEvent, useEffect, useRef, useState } from "react";
import {
  type Direction,
  type DirectionLoad,
  type Reservation,
  timelineQueryOptions,
} from "@/api/reservations";
import { Button, QueryState } from "@/components/ui";
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
  viewStart,
  ZOOMS,
  type Zoom,
  zoomById,
} from "./timeline";

const LOAD_HEIGHT = 120;
const BAR_HEIGHT = 22;
const BAR_GAP = 4;
const AXIS_HEIGHT = 22;
const LEFT = 8;
const RIGHT = 8;

/** What a click on the timeline proposes: a window of one slot at the clicked time. */
export interface SlotPick {
  direction: Direction;
  start: number;
  end: number;
}

function useWidth<T extends HTMLElement>(): [React.RefObject<T | null>, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(800);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => setWidth(Math.max(320, el.clientWidth));
    update();
    const observer = new ResizeObserver(update);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

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

/** Booked load per direction over the coming hours to weeks, with the capacity line and the
 * reservations you may see as Gantt bars; a click on a free moment starts a booking there. */
export function ReservationTimeline({
  onPick,
  highlight,
}: {
  onPick: (pick: SlotPick) => void;
  /** The window the booking form currently holds, drawn as a band. */
  highlight?: { direction: Direction; start: number; end: number } | null;
}) {
  const [zoomId, setZoomId] = useState("1d");
  const zoom = zoomById(zoomId);
  const [offset, setOffset] = useState(0);
  const [now] = useState(() => Date.now());
  const start = viewStart(now, zoom) + offset * zoom.span;
  const end = start + zoom.span;
  const timeline = useQuery(timelineQueryOptions(new Date(start).toISOString(), new Date(end).toISOString()));
  const [ref, width] = useWidth<HTMLDivElement>();

  return (
    <div className="res-timeline" ref={ref}>
      <div className="res-timeline__toolbar">
        <fieldset className="res-zoom" aria-label="Zoom">
          {ZOOMS.map((z) => (
            <Button
              key={z.id}
              size="sm"
              variant={z.id === zoomId ? "primary" : "secondary"}
              aria-pressed={z.id === zoomId}
              onClick={() => {
                setZoomId(z.id);
                setOffset(0);
              }}
            >
              {z.label}
            </Button>
          ))}
        </fieldset>
        <div className="res-timeline__nav">
          <Button size="sm" onClick={() => setOffset((o) => o - 1)} aria-label="Earlier">
            ←
          </Button>
          <Button size="sm" onClick={() => setOffset(0)} disabled={offset === 0}>
            Now
          </Button>
          <Button size="sm" onClick={() => setOffset((o) => o + 1)} aria-label="Later">
            →
          </Button>
        </div>
      </div>
      <QueryState query={timeline} loading="Loading the timeline" retry={false}>
        {(data) =>
          data.directions.map((d) => (
            <Lane
              key={d.direction}
              load={d}
              reservations={data.reservations.filter((r) => r.direction === d.direction)}
              start={start}
              end={end}
              zoom={zoom}
              width={width}
              now={Date.parse(data.now)}
              onPick={onPick}
              highlight={highlight?.direction === d.direction ? highlight : null}
            />
          ))
        }
      </QueryState>
      <p className="res-timeline__hint muted">
        Shaded: booked load of everyone's reservations; solid line: capacity; dashed: bookable (the rest stays
        free for traffic without a reservation). Bars: your reservations. Click a free moment to book from
        there.
      </p>
    </div>
  );
}

function Lane({
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
  const navigate = useNavigate();
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
        {bars.map(({ item, lane }) => {
          const bx = x(item.start);
          const bw = Math.max(3, x(item.end) - bx);
          const by = barsTop + lane * (BAR_HEIGHT + BAR_GAP);
          const text = `${item.r.bucket} · ${formatRate(item.r.rate_mbps)}`;
          return (
            // biome-ignore lint/a11y/useSemanticElements: an SVG bar cannot be a <button>; it acts as one.
            <g
              key={item.r.id}
              className={`res-bar res-bar--${item.r.state}`}
              role="button"
              tabIndex={0}
              aria-label={`Reservation ${text}, ${item.r.state}`}
              onClick={() =>
                navigate({ to: "/reservations/$reservationId", params: { reservationId: item.r.id } })
              }
              onKeyDown={(e) => {
                if (e.key === "Enter" || e.key === " ") {
                  e.preventDefault();
                  navigate({ to: "/reservations/$reservationId", params: { reservationId: item.r.id } });
                }
              }}
            >
              <rect x={bx} y={by} width={bw} height={BAR_HEIGHT} rx={4} />
              <title>{`${text} (${item.r.owner}) ${new Date(item.start).toLocaleString()} – ${new Date(item.end).toLocaleString()}`}</title>
              {bw > 60 ? (
                <text x={bx + 6} y={by + 15} className="res-bar__label">
                  {text}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
