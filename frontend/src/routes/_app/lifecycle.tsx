import { createFileRoute } from "@tanstack/react-router";
import { LifecyclePage } from "@/components/lifecycle/LifecyclePage";

interface LifecycleSearch {
  bucket?: string;
}

export const Route = createFileRoute("/_app/lifecycle")({
  validateSearch: (search: Record<string, unknown>): LifecycleSearch => ({
    bucket: typeof search.bucket === "string" && search.bucket ? search.bucket : undefined,
  }),
  component: LifecycleRoute,
});

function LifecycleRoute() {
  const { bucket = "" } = Route.useSearch();
  const navigate = Route.useNavigate();
  const { user } = Route.useRouteContext();
  return (
    <LifecyclePage
      isAdmin={user.is_admin}
      bucket={bucket}
      onBucket={(b) => navigate({ search: { bucket: b || undefined }, replace: true })}
    />
  );
}
