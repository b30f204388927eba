import { createFileRoute } from "@tanstack/react-router";
import { IntegrityPage } from "@/components/integrity/IntegrityPage";

export const Route = createFileRoute("/_app/integrity")({
  component: IntegrityRoute,
});

function IntegrityRoute() {
  const { user } = Route.useRouteContext();
  return <IntegrityPage isAdmin={user.is_admin} />;
}
