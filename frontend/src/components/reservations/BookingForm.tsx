import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { overviewQueryOptions } from "@/api/overview";
import {
  availabilityQueryOptions,
  type Direction,
  type Reservation,
  useBookReservation,
} from "@/api/reservations";
import { Input, Select } from "@/components/ui";
import { useSettled } from "@/lib/useSettled";
import { AvailabilityNote, BookingRefusal } from "./AvailabilityNote";
import { BookButton, whyNotBookable } from "./BookButton";
import { fromLocalInput, HOUR, toLocalInput } from "./timeline";
import "./reservations.css";

export interface BookingDraft {
  direction: Direction;
  start: number;
  end: number;
}

export function defaultDraft(now = Date.now()): BookingDraft {
  const start = Math.ceil((now + 15 * 60_000) / HOUR) * HOUR;
  return { direction: "read", start, end: start + 2 * HOUR };
}

/** Book a rate for a window; while the user types, says whether it fits, the largest rate that
 * would, and the earliest window of the same length where the asked rate fits. */
export function BookingForm({
  draft,
  onDraftChange,
  onBooked,
  onSubmitted,
}: {
  draft: BookingDraft;
  onDraftChange: (d: BookingDraft) => void;
  onBooked: (r: Reservation) => void;
  /** A new attempt: an earlier confirmation no longer describes the form's outcome. */
  onSubmitted?: () => void;
}) {
  const overview = useQuery(overviewQueryOptions());
  const book = useBookReservation();
  const [bucket, setBucket] = useState("");
  const [rate, setRate] = useState("100");
  const [note, setNote] = useState("");
  const [startText, setStartText] = useState(toLocalInput(draft.start));
  const [endText, setEndText] = useState(toLocalInput(draft.end));

  // a click on the timeline replaces the window
  useEffect(() => {
    setStartText(toLocalInput(draft.start));
    setEndText(toLocalInput(draft.end));
  }, [draft.start, draft.end]);

  const start = fromLocalInput(startText);
  const end = fromLocalInput(endText);
  const rateValue = Number(rate);
  const windowError =
    Number.isNaN(start) || Number.isNaN(end)
      ? "Enter a start and an end"
      : end <= start
        ? "End must be after start"
        : null;
  const rateError = !(rateValue > 0) ? "Enter a rate above 0 MB/s" : null;
  const query = useSettled(
    windowError
      ? null
      : {
          direction: draft.direction,
          start: new Date(start).toISOString(),
          end: new Date(end).toISOString(),
          rate_mbps: rateError ? undefined : rateValue,
        },
    250,
  );
  const availability = useQuery({
    ...availabilityQueryOptions(query ?? { direction: "read", start: "", end: "" }),
    enabled: query != null,
  });

  const setWindow = (s: number, e: number) => {
    setStartText(toLocalInput(s));
    setEndText(toLocalInput(e));
    if (!Number.isNaN(s) && !Number.isNaN(e)) onDraftChange({ ...draft, start: s, end: e });
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (windowError || rateError || !bucket || doesNotFit) return;
    onSubmitted?.();
    book.mutate(
      {
        bucket,
        direction: draft.direction,
        rate_mbps: rateValue,
        start: new Date(start).toISOString(),
        end: new Date(end).toISOString(),
        note,
      },
      {
        onSuccess: (r) => {
          setNote("");
          onBooked(r);
        },
      },
    );
  };

  const a = availability.data;
  // the server checks again when booking; this only spares a request that cannot succeed
  const doesNotFit = query != null && a?.fits === false && a.rate_mbps === query.rate_mbps;
  const buckets = overview.data?.buckets.map((b) => b.name) ?? [];

  return (
    <form className="res-form" aria-label="Book a reservation" onSubmit={submit} noValidate>
      <div className="res-form__grid">
        <Select
          label="Bucket"
          value={bucket}
          required
          onChange={(e) => setBucket(e.target.value)}
          hint={
            overview.isSuccess && buckets.length === 0
              ? "You have no bucket yet: create one in the Browser first."
              : "the bucket the reserved requests go to"
          }
          options={[
            { value: "", label: overview.isPending ? "Loading buckets…" : "Choose a bucket", disabled: true },
            ...buckets.map((b) => ({ value: b, label: b })),
          ]}
        />
        <Select
          label="Direction"
          value={draft.direction}
          onChange={(e) => onDraftChange({ ...draft, direction: e.target.value as Direction })}
          options={[
            { value: "read", label: "read (GET)" },
            { value: "write", label: "write (PUT, uploads)" },
          ]}
        />
        <Input
          label="Rate (MB/s)"
          type="number"
          min={0}
          step="any"
          inputMode="decimal"
          value={rate}
          onChange={(e) => setRate(e.target.value)}
          error={rateError}
          hint="MB/s = 10⁶ bytes per second, shared by all requests that carry the reservation"
        />
        <Input
          label="Start (local time)"
          type="datetime-local"
          value={startText}
          onChange={(e) => setWindow(fromLocalInput(e.target.value), end)}
          error={windowError === "Enter a start and an end" ? windowError : null}
        />
        <Input
          label="End (local time)"
          type="datetime-local"
          value={endText}
          onChange={(e) => setWindow(start, fromLocalInput(e.target.value))}
          error={windowError === "End must be after start" ? windowError : null}
        />
        <Input
          label="Note (optional)"
          value={note}
          maxLength={500}
          onChange={(e) => setNote(e.target.value)}
        />
      </div>

      <AvailabilityNote asked={query != null} availability={availability} onUseWindow={setWindow} />

      <BookingRefusal
        error={book.isError ? book.error : null}
        rate={rateValue}
        direction={draft.direction}
        offerEarliest={!(a?.fits === false && a.earliest_start)}
        onMove={(s) => {
          setWindow(s, s + (end - start));
          book.reset();
        }}
      />
      <BookButton
        pending={book.isPending}
        blocked={whyNotBookable({ bucket, windowError, rateError, doesNotFit })}
      />
    </form>
  );
}
