import { createFileRoute } from "@tanstack/react-router";
import { NotAvailableYet } from "@/components/layout/NotAvailableYet";

export const Route = createFileRoute("/_app/planner")({
  component: CostPlannerPage,
});

function CostPlannerPage() {
  return (
    <NotAvailableYet
      title="Cost planner"
      icon="planner"
      summary="What-if reports of storage, request, restore and egress costs per access frequency."
      features={[
        "compare monthly cost against access frequency per tier, with break-even points marked",
        "simulate lifecycle policies and hybrid on-premises + cloud plans",
        "save, compare, share, export (CSV) and print scenarios",
      ]}
    />
  );
}
