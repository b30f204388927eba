import { useState } from "react";
import type { Reservation } from "@/api/reservations";
import { Card, PageHeader } from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import { type BookingDraft, BookingForm, defaultDraft } from "./BookingForm";
import { CapacityForm } from "./CapacityForm";
import { ClientSnippets } from "./ClientSnippets";
import { ReservationsTable } from "./ReservationsTable";
import { ReservationTimeline } from "./ReservationTimeline";
import { formatRate } from "./timeline";
import "./reservations.css";

/** Book throughput like a meeting room: the timeline of booked load, the booking form with live
 * availability, the list of reservations, and (admins) the pool's capacity. */
export function ReservationsPage({ isAdmin }: { isAdmin: boolean }) {
  const [draft, setDraft] = useState<BookingDraft>(() => defaultDraft());
  const [booked, setBooked] = useState<Reservation | null>(null);
  return (
    <>
      <PageHeader
        title="Reservations"
        description="Book read or write throughput on a bucket for a window; requests that carry the reservation id get that rate through the gateway, whatever else runs. Rates in MB/s (10⁶ bytes/s)."
      />
      <Card
        title="Timeline"
        description="Booked load per direction for the coming hours to weeks (local time)."
      >
        <ReservationTimeline
          highlight={draft}
          onPick={(pick) => {
            setDraft(pick);
            setBooked(null);
            document.getElementById("book")?.scrollIntoView({ behavior: "smooth", block: "start" });
          }}
        />
      </Card>
      <Card id="book" title="Book a reservation">
        <BookingForm
          draft={draft}
          onDraftChange={setDraft}
          onBooked={setBooked}
          onSubmitted={() => setBooked(null)}
        />
        {booked ? (
          <section className="res-booked" aria-label="Booked">
            <h3>
              Booked {formatRate(booked.rate_mbps)} of {booked.direction} on {booked.bucket},{" "}
              {formatDateTime(booked.start)} – {formatDateTime(booked.end)}
            </h3>
            <p className="muted">Send the id with every request of the transfer, e.g.:</p>
            <ClientSnippets reservation={booked} />
          </section>
        ) : null}
      </Card>
      <Card title={isAdmin ? "All reservations" : "My reservations"} padded>
        <ReservationsTable showOwner={isAdmin} />
      </Card>
      {isAdmin ? (
        <Card
          title="Gateway capacity"
          description="What the gateway pool delivers per direction; bookings are admitted against it."
        >
          <CapacityForm />
        </Card>
      ) : null}
    </>
  );
}
