import { createFileRoute } from "@tanstack/react-router";
import { SharingPage } from "@/components/sharing/SharingPage";

interface SharingSearch {
  bucket?: string;
}

export const Route = createFileRoute("/_app/sharing")({
  validateSearch: (search: Record<string, unknown>): SharingSearch => ({
    bucket: typeof search.bucket === "string" && search.bucket ? search.bucket : undefined,
  }),
  component: SharingRoute,
});

function SharingRoute() {
  const { bucket = "" } = Route.useSearch();
  const navigate = Route.useNavigate();
  return (
    <SharingPage
      bucket={bucket}
      onBucket={(b) => navigate({ search: { bucket: b || undefined }, replace: true })}
    />
  );
}
