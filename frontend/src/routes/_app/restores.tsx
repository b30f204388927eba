import { createFileRoute } from "@tanstack/react-router";
import { NotAvailableYet } from "@/components/layout/NotAvailableYet";

export const Route = createFileRoute("/_app/restores")({
  component: RestoresPage,
});

function RestoresPage() {
  return (
    <NotAvailableYet
      title="Restores"
      icon="restores"
      summary="Restore archived objects in batches and watch the queue until every object is readable."
      features={[
        "see every restore batch with its speed, progress, ready time and cost",
        "follow a batch object by object and export a download list once it is ready",
        "get notified when a batch completes",
      ]}
    />
  );
}
