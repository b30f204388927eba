import { useNavigate } from "@tanstack/react-router";
import type { Reservation } from "@/api/reservations";
import { formatRate } from "./timeline";
import "./reservations.css";

export const BAR_HEIGHT = 22;
export const BAR_GAP = 4;

interface Bar {
  item: { r: Reservation; start: number; end: number };
  lane: number;
}

/** The user's reservations as bars under the load chart, one lane per overlap; each opens its reservation. */
export function ReservationBars({ bars, x, top }: { bars: Bar[]; x: (t: number) => number; top: number }) {
  const navigate = useNavigate();
  return (
    <>
      {bars.map(({ item, lane }) => {
        const bx = x(item.start);
        const bw = Math.max(3, x(item.end) - bx);
        const by = top + lane * (BAR_HEIGHT + BAR_GAP);
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
    </>
  );
}
