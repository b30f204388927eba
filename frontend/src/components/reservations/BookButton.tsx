import { Button } from "@/components/ui";
import "./reservations.css";

/** Why the booking cannot be sent yet, in the order a person fixes the form; null when it can. */
export function whyNotBookable(s: {
  bucket: string;
  windowError: string | null;
  rateError: string | null;
  doesNotFit: boolean;
}): string | null {
  if (!s.bucket) return "Choose a bucket to book for.";
  if (s.rateError) return `Fix the rate: ${s.rateError}.`;
  if (s.windowError) return `Fix the window: ${s.windowError}.`;
  if (s.doesNotFit) return "This rate does not fit the window: take the earliest free slot or a lower rate.";
  return null;
}

/** The submit button, the reason it is disabled, and what a booking guarantees. */
export function BookButton({ pending, blocked }: { pending: boolean; blocked: string | null }) {
  return (
    <div className="res-form__actions">
      <p className="muted res-form__why" id="book-why">
        {blocked ??
          "A booking is a guaranteed floor, not a cap: requests carrying it get at least this rate, and may go faster when the gateway has room."}
      </p>
      <Button type="submit" variant="primary" disabled={pending || !!blocked} aria-describedby="book-why">
        {pending ? "Booking…" : "Book reservation"}
      </Button>
    </div>
  );
}
