import type { QueryClient } from "@tanstack/react-query";
import { createRootRouteWithContext, Link, Outlet } from "@tanstack/react-router";
import { EmptyState } from "@/components/ui";

export interface RouterContext {
  queryClient: QueryClient;
}

export const Route = createRootRouteWithContext<RouterContext>()({
  component: Outlet,
  notFoundComponent: NotFound,
});

function NotFound() {
  return (
    <div className="page-center">
      <EmptyState
        icon="?"
        title="Page not found"
        level={2}
        description="There is no page at this address."
        action={<Link to="/">Go to the overview</Link>}
      />
    </div>
  );
}
