import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import {
  type Reservation,
  type ReservationState,
  reservationsQueryOptions,
  useCancelReservation,
} from "@/api/reservations";
import {
  Badge,
  type BadgeTone,
  Button,
  type Column,
  ConfirmDialog,
  EmptyState,
  QueryState,
  Select,
  Table,
} from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import { formatRate } from "./timeline";
import "./reservations.css";

export const STATE_TONE: Record<ReservationState, BadgeTone> = {
  booked: "info",
  active: "success",
  finished: "neutral",
  cancelled: "warning",
};

const FILTERS: Array<{ value: string; label: string; states: ReservationState[] }> = [
  { value: "current", label: "Booked and active", states: ["booked", "active"] },
  { value: "all", label: "All", states: [] },
  { value: "booked", label: "Booked", states: ["booked"] },
  { value: "active", label: "Active", states: ["active"] },
  { value: "finished", label: "Finished", states: ["finished"] },
  { value: "cancelled", label: "Cancelled", states: ["cancelled"] },
];

/** Reservations (your own; an admin's: everyone's) with a state filter, details and cancel. */
export function ReservationsTable({ showOwner }: { showOwner: boolean }) {
  const [filter, setFilter] = useState("current");
  const states = FILTERS.find((f) => f.value === filter)?.states ?? [];
  const list = useQuery(reservationsQueryOptions(states));
  const cancel = useCancelReservation();
  const [cancelling, setCancelling] = useState<Reservation | null>(null);

  const columns: Array<Column<Reservation>> = [
    {
      id: "bucket",
      header: "Bucket",
      cell: (r) => (
        <div className="cell-stack">
          <Link to="/reservations/$reservationId" params={{ reservationId: r.id }}>
            <strong>{r.bucket}</strong>
          </Link>
          {r.note ? <span className="cell-sub">{r.note}</span> : null}
        </div>
      ),
    },
    ...(showOwner ? [{ id: "owner", header: "Owner", cell: (r: Reservation) => r.owner }] : []),
    { id: "direction", header: "Direction", cell: (r) => r.direction },
    { id: "rate", header: "Rate", cell: (r) => formatRate(r.rate_mbps), align: "end" },
    {
      id: "window",
      header: "Window (local time)",
      cell: (r) => (
        <div className="cell-stack">
          <span>{formatDateTime(r.start)}</span>
          <span className="cell-sub">until {formatDateTime(r.end)}</span>
        </div>
      ),
    },
    { id: "state", header: "State", cell: (r) => <Badge tone={STATE_TONE[r.state]}>{r.state}</Badge> },
    {
      id: "achieved",
      header: "Achieved (mean)",
      cell: (r) => (r.achieved_mean_mbps != null ? formatRate(r.achieved_mean_mbps) : "—"),
      align: "end",
      hideOnNarrow: true,
    },
    {
      id: "actions",
      header: <span className="visually-hidden">Actions</span>,
      align: "end",
      cell: (r) =>
        r.state === "booked" || r.state === "active" ? (
          <Button
            size="sm"
            variant="ghost"
            className="button-danger-text"
            onClick={() => setCancelling(r)}
            aria-label={`Cancel the reservation of ${r.bucket} from ${formatDateTime(r.start)}`}
          >
            Cancel
          </Button>
        ) : null,
    },
  ];

  return (
    <div className="res-list">
      <div className="res-list__filter">
        <Select
          label="Show"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
          options={FILTERS.map((f) => ({ value: f.value, label: f.label }))}
        />
      </div>
      <QueryState query={list} loading="Loading reservations">
        {(data) => (
          <Table
            caption="Reservations"
            columns={columns}
            rows={data}
            rowKey={(r) => r.id}
            empty={
              <EmptyState
                title="No reservations here"
                level={3}
                description="Book one above: pick a window on the timeline or fill in the form."
              />
            }
          />
        )}
      </QueryState>
      <ConfirmDialog
        open={cancelling != null}
        title="Cancel this reservation?"
        description={
          cancelling
            ? `${formatRate(cancelling.rate_mbps)} of ${cancelling.direction} on ${cancelling.bucket} from ${formatDateTime(cancelling.start)}: the window becomes free for others, and requests carrying its id are refused from now on.`
            : ""
        }
        confirmLabel="Cancel reservation"
        pending={cancel.isPending}
        error={cancel.error}
        onCancel={() => {
          setCancelling(null);
          cancel.reset();
        }}
        onConfirm={() => {
          if (cancelling) cancel.mutate(cancelling.id, { onSuccess: () => setCancelling(null) });
        }}
      />
    </div>
  );
}
