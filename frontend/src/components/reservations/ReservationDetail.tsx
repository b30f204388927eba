import { useQuery } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { reservationQueryOptions, throughputQueryOptions, useCancelReservation } from "@/api/reservations";
import { Badge, Button, Card, ConfirmDialog, PageHeader, QueryState, Stat } from "@/components/ui";
import { formatBytes, formatDateTime, formatDuration } from "@/lib/format";
import { ClientSnippets } from "./ClientSnippets";
import { STATE_TONE } from "./ReservationsTable";
import { ThroughputChart } from "./ThroughputChart";
import { formatRate } from "./timeline";
import "./reservations.css";

/** One reservation: its figures, client snippets and booked-vs-achieved throughput (live while active). */
export function ReservationDetail({ id }: { id: string }) {
  const reservation = useQuery(reservationQueryOptions(id));
  const live = reservation.data?.state === "active";
  const throughput = useQuery(throughputQueryOptions(id, live));
  const cancel = useCancelReservation();
  const navigate = useNavigate();
  const [confirming, setConfirming] = useState(false);

  const r = reservation.data;
  if (!r) {
    if (reservation.isPending) return <QueryState query={reservation} loading="Loading the reservation" />;
    return (
      <>
        <PageHeader title="Reservation" />
        <QueryState query={reservation} retry={false} />
        <Link to="/reservations">Back to reservations</Link>
      </>
    );
  }
  const seconds = (Date.parse(r.end) - Date.parse(r.start)) / 1000;
  return (
    <>
      <PageHeader
        title={`${r.bucket}: ${formatRate(r.rate_mbps)} ${r.direction}`}
        description={`${formatDateTime(r.start)} – ${formatDateTime(r.end)} (${formatDuration(seconds)}), booked by ${r.owner}${r.note ? ` · ${r.note}` : ""}`}
        actions={
          <>
            <Link to="/reservations">All reservations</Link>
            {r.state === "booked" || r.state === "active" ? (
              <Button variant="danger" onClick={() => setConfirming(true)}>
                Cancel reservation
              </Button>
            ) : null}
          </>
        }
      />
      <div className="res-stats">
        <Stat label="State" value={<Badge tone={STATE_TONE[r.state]}>{r.state}</Badge>} />
        <Stat label="Booked" value={formatRate(r.rate_mbps)} detail={r.direction} />
        <Stat
          label="Achieved (mean)"
          value={formatRate(r.achieved_mean_mbps)}
          detail="over the seconds that carried traffic"
        />
        <Stat
          label="Achieved (5th percentile)"
          value={formatRate(r.achieved_p5_mbps)}
          detail="of 1 s samples"
        />
        <Stat
          label="Moved"
          value={formatBytes(r.achieved_bytes)}
          detail={`${r.active_seconds} s with traffic`}
        />
      </div>
      <Card
        title="Booked against achieved"
        description={
          live ? "Live: the gateway's metering, a few seconds behind." : "From the gateway's metering."
        }
      >
        <QueryState
          query={throughput}
          loading="Loading throughput"
          retry={false}
          isEmpty={(data) => data.points.length === 0}
          empty={<p className="muted">The window has not started yet: nothing metered.</p>}
        >
          {(data) => <ThroughputChart data={data} />}
        </QueryState>
      </Card>
      <Card title="Use it" description="Every request that carries the id shares the reserved rate.">
        <ClientSnippets reservation={r} />
      </Card>
      <ConfirmDialog
        open={confirming}
        title="Cancel this reservation?"
        description="The window becomes free for others, and requests carrying its id are refused from now on."
        confirmLabel="Cancel reservation"
        pending={cancel.isPending}
        error={cancel.error}
        onCancel={() => {
          setConfirming(false);
          cancel.reset();
        }}
        onConfirm={() =>
          cancel.mutate(r.id, {
            onSuccess: () => {
              setConfirming(false);
              void navigate({ to: "/reservations" });
            },
          })
        }
      />
    </>
  );
}
