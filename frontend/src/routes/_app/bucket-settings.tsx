import { createFileRoute } from "@tanstack/react-router";
import { BucketSettingsPage } from "@/components/catalog/BucketSettingsPage";

interface BucketSettingsSearch {
  bucket?: string;
}

export const Route = createFileRoute("/_app/bucket-settings")({
  validateSearch: (search: Record<string, unknown>): BucketSettingsSearch => ({
    bucket: typeof search.bucket === "string" && search.bucket ? search.bucket : undefined,
  }),
  component: BucketSettingsRoute,
});

function BucketSettingsRoute() {
  const { bucket = "" } = Route.useSearch();
  const navigate = Route.useNavigate();
  return (
    <BucketSettingsPage
      bucket={bucket}
      onBucket={(b) => navigate({ search: { bucket: b || undefined }, replace: true })}
    />
  );
}
