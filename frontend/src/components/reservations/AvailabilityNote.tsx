import { ApiError } from "@/api/client";
import { type Availability, type Direction, isBookingConflict } from "@/api/reservations";
import { Button, ErrorBanner } from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import { formatRate } from "./timeline";
import "./reservations.css";

/** Whether the asked window fits, the largest rate that would, and the earliest window where the rate fits. */
export function AvailabilityNote({
  asked,
  availability,
  onUseWindow,
}: {
  /** False until the form holds a valid window to ask about. */
  asked: boolean;
  availability: { data?: Availability; isError: boolean; error: unknown };
  onUseWindow: (start: number, end: number) => void;
}) {
  const a = availability.data;
  return (
    <output className="res-availability" aria-live="polite" data-testid="availability">
      {!asked ? (
        <span className="muted">Pick a window to see what is free.</span>
      ) : availability.isError ? (
        <ErrorBanner error={availability.error} />
      ) : !a ? (
        <span className="muted">Checking availability…</span>
      ) : a.fits === false ? (
        <>
          <strong className="res-availability__no">Does not fit.</strong> At most{" "}
          <strong data-testid="max-rate">{formatRate(a.max_rate_mbps)}</strong> of {a.direction} is free in
          this window ({formatRate(a.booked_peak_mbps)} already booked of {formatRate(a.bookable_mbps)}{" "}
          bookable).{" "}
          {a.earliest_start && a.earliest_end ? (
            <>
              The earliest window of this length where {formatRate(a.rate_mbps)} fits starts{" "}
              <strong>{formatDateTime(a.earliest_start)}</strong>.{" "}
              <Button
                size="sm"
                onClick={() =>
                  onUseWindow(Date.parse(a.earliest_start as string), Date.parse(a.earliest_end as string))
                }
              >
                Use that window
              </Button>
            </>
          ) : (
            <>That rate is above the bookable capacity at any time.</>
          )}
        </>
      ) : (
        <>
          <strong className="res-availability__yes">{a.fits ? "Fits." : "Free:"}</strong> Up to{" "}
          <strong data-testid="max-rate">{formatRate(a.max_rate_mbps)}</strong> of {a.direction} is free in
          this window ({formatRate(a.booked_peak_mbps)} already booked of {formatRate(a.bookable_mbps)}{" "}
          bookable).
        </>
      )}
    </output>
  );
}

/** Why a booking was refused; for a rate that no longer fits, the earliest window where it does. */
export function BookingRefusal({
  error,
  rate,
  direction,
  offerEarliest,
  onMove,
}: {
  error: unknown;
  rate: number;
  direction: Direction;
  /** False when the availability note already offers that window. */
  offerEarliest: boolean;
  onMove: (start: number) => void;
}) {
  if (!error) return null;
  const conflict = error instanceof ApiError && isBookingConflict(error.body) ? error.body : null;
  return (
    <>
      <ErrorBanner
        title="Not booked"
        error={
          conflict
            ? `${formatRate(rate)} does not fit: at most ${formatRate(conflict.max_rate_mbps)} of ${direction} is free in that window.`
            : error
        }
      />
      {conflict?.earliest_start && offerEarliest ? (
        <p>
          <Button size="sm" onClick={() => onMove(Date.parse(conflict.earliest_start as string))}>
            Move to the earliest window that fits: {formatDateTime(conflict.earliest_start)}
          </Button>
        </p>
      ) : null}
    </>
  );
}
