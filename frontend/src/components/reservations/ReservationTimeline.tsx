import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { type Direction, timelineQueryOptions } from "@/api/reservations";
import { Button, QueryState } from "@/components/ui";
import { Lane } from "./TimelineLane";
import { viewStart, ZOOMS, zoomById } from "./timeline";
import "./reservations.css";

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
