import { createFileRoute } from "@tanstack/react-router";
import { ReservationDetail } from "@/components/reservations/ReservationDetail";

export const Route = createFileRoute("/_app/reservations_/$reservationId")({
  component: ReservationRoute,
});

function ReservationRoute() {
  const { reservationId } = Route.useParams();
  return <ReservationDetail id={reservationId} />;
}
