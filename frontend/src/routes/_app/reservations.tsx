import { createFileRoute } from "@tanstack/react-router";
import { NotAvailableYet } from "@/components/layout/NotAvailableYet";

export const Route = createFileRoute("/_app/reservations")({
  component: ReservationsPage,
});

function ReservationsPage() {
  return (
    <NotAvailableYet
      title="Reservations"
      icon="reservations"
      summary="Book read or write throughput (MB/s = 10⁶ bytes/s) on a bucket for a time window."
      features={[
        "book a rate for a window and see live whether it fits, with the largest rate that would",
        "copy the reservation id and ready-made client snippets (boto3, rclone, s3cmd)",
        "watch booked against achieved throughput while a reservation is active, and cancel it",
      ]}
    />
  );
}
