import { createFileRoute } from "@tanstack/react-router";
import type { Scope } from "@/api/restores";
import { RestoresPage } from "@/components/restores/RestoresPage";

interface RestoresSearch {
  batch?: number;
  scope?: Scope;
}

export const Route = createFileRoute("/_app/restores")({
  validateSearch: (search: Record<string, unknown>): RestoresSearch => {
    const batch = Number(search.batch);
    return {
      batch: Number.isInteger(batch) && batch > 0 ? batch : undefined,
      scope: search.scope === "everyone" ? "everyone" : undefined,
    };
  },
  component: RestoresRoute,
});

function RestoresRoute() {
  const { batch, scope = "mine" } = Route.useSearch();
  const { user } = Route.useRouteContext();
  return <RestoresPage batch={batch} scope={scope} isAdmin={user.is_admin} />;
}
