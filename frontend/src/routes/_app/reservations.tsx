import { createFileRoute } from "@tanstack/react-router";
import { ReservationsPage } from "@/components/reservations/ReservationsPage";

export const Route = createFileRoute("/_app/reservations")({
  component: ReservationsRoute,
});

function ReservationsRoute() {
  const { user } = Route.useRouteContext();
  return <ReservationsPage isAdmin={user.is_admin} />;
}
