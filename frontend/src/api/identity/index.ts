import { queryOptions, useMutation } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../client";

export type SignInProviders = Schemas["ProvidersOut"];
export type IdentityStatus = Schemas["IdentityStatus"];
export type MappingRow = Schemas["MappingRow"];
export type SignIn = Schemas["SignIn"];

export const identityKeys = {
  all: ["identity"] as const,
  providers: () => [...identityKeys.all, "providers"] as const,
  status: () => [...identityKeys.all, "status"] as const,
};

/** What the login page offers: an OpenID Connect button, the directory behind the password form. */
export const providersQueryOptions = () =>
  queryOptions({
    queryKey: identityKeys.providers(),
    queryFn: () => unwrap(api.GET("/api/auth/providers")),
    staleTime: 5 * 60_000,
  });

/** Where the browser goes to sign in at the identity provider; `next` is where it lands afterwards. */
export function oidcLoginUrl(next: string): string {
  return next === "/" ? "/api/auth/oidc/login" : `/api/auth/oidc/login?${new URLSearchParams({ next })}`;
}

/** Admins: the provider's state, the directory, the group mapping and the latest sign-ins. */
export const identityStatusQueryOptions = () =>
  queryOptions({
    queryKey: identityKeys.status(),
    queryFn: () => unwrap(api.GET("/api/identity")),
  });

/** Admins: what a sign-in with these groups would give, changing nothing. */
export function useIdentityDryRun() {
  return useMutation({
    mutationFn: (groups: string[]) => unwrap(api.POST("/api/identity/dry-run", { body: { groups } })),
  });
}
