import { createFileRoute } from "@tanstack/react-router";
import { PlannerPage } from "@/components/pricing/PlannerPage";

interface PlannerSearch {
  scenario?: number | undefined;
  shared?: string | undefined;
}

export const Route = createFileRoute("/_app/planner")({
  validateSearch: (search: Record<string, unknown>): PlannerSearch => ({
    scenario:
      Number.isInteger(Number(search.scenario)) && search.scenario !== undefined
        ? Number(search.scenario)
        : undefined,
    shared: typeof search.shared === "string" && search.shared ? search.shared : undefined,
  }),
  component: CostPlannerRoute,
});

function CostPlannerRoute() {
  const { scenario, shared } = Route.useSearch();
  const { user } = Route.useRouteContext();
  return <PlannerPage scenarioId={scenario} sharedToken={shared} isAdmin={user.is_admin} />;
}
