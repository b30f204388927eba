import { QueryClient } from "@tanstack/react-query";
import { createRouter } from "@tanstack/react-router";
import { authKeys } from "@/api/auth";
import { ApiError, setUnauthorizedHandler } from "@/api/client";
import { ErrorBanner, LoadingState } from "@/components/ui";
import { routeTree } from "./routeTree.gen";

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 10_000,
        // A 4xx will not heal by asking again; network blips and 5xx get one more try.
        retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 1,
        refetchOnWindowFocus: true,
      },
    },
  });
}

export function createAppRouter(queryClient: QueryClient) {
  const router = createRouter({
    routeTree,
    context: { queryClient },
    defaultPreload: "intent",
    // The query cache decides freshness; the router should always ask it.
    defaultPreloadStaleTime: 0,
    scrollRestoration: true,
    defaultPendingComponent: () => <LoadingState />,
    defaultErrorComponent: ({ error, reset }) => (
      <ErrorBanner title="This page could not be loaded" error={error} onRetry={reset} />
    ),
  });

  // Any 401 means the session ended (expired, revoked, server restarted): forget the user and
  // send them to sign in, coming back to where they were afterwards.
  setUnauthorizedHandler(() => {
    queryClient.setQueryData(authKeys.me(), null);
    const { pathname, href } = router.state.location;
    if (pathname === "/login") return;
    void router.navigate({ to: "/login", search: { redirect: href } });
  });

  return router;
}

declare module "@tanstack/react-router" {
  interface Register {
    router: ReturnType<typeof createAppRouter>;
  }
}
