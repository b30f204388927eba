import { createFileRoute } from "@tanstack/react-router";
import { NotAvailableYet } from "@/components/layout/NotAvailableYet";

export const Route = createFileRoute("/_app/lifecycle")({
  component: LifecyclePage,
});

function LifecyclePage() {
  return (
    <NotAvailableYet
      title="Lifecycle"
      icon="lifecycle"
      summary="Rules that move data down the tiers on schedule and expire it."
      features={[
        "edit a bucket's transition and expiration rules (the same rules S3 clients set)",
        "preview what moves or expires per day over the next 90 days and what it costs",
        "see the history of executed moves and retry failed ones",
      ]}
    />
  );
}
