import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { readCookie } from "@/lib/cookies";
import { ApiError, api, CSRF_COOKIE, type Schemas, unwrap } from "../client";

export type User = Schemas["UserOut"];
export type LoginInput = Schemas["LoginIn"];
export type ApiToken = Schemas["TokenInfo"];
/** A token with its secret: the only time the secret is ever shown. */
export type NewApiToken = Schemas["TokenOut"];
export type TokenCreateInput = Schemas["TokenCreate"];
export type PasswordChangeInput = Schemas["PasswordChange"];

export const authKeys = {
  all: ["auth"] as const,
  me: () => [...authKeys.all, "me"] as const,
};

/** The signed-in user; resolves to null when nobody is signed in (401). */
export const meQueryOptions = () =>
  queryOptions({
    queryKey: authKeys.me(),
    queryFn: async (): Promise<User | null> => {
      // Sign-in sets the readable CSRF cookie next to the session cookie and sign-out removes both:
      // without it nobody is signed in, and asking would only log a 401 in the console.
      if (readCookie(CSRF_COOKIE) === null) return null;
      try {
        return await unwrap(api.GET("/api/auth/me"));
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return null;
        throw err;
      }
    },
    staleTime: 5 * 60_000,
  });

export function useLogin() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: LoginInput) => unwrap(api.POST("/api/auth/login", { body })),
    onSuccess: (data) => {
      // Data cached for a previous user must not leak into this session.
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== authKeys.all[0] });
      queryClient.setQueryData(authKeys.me(), data.user);
    },
  });
}

export function useLogout() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST("/api/auth/logout")),
    onSettled: () => {
      queryClient.clear();
      queryClient.setQueryData(authKeys.me(), null);
    },
  });
}

// Not under authKeys: a new sign-in keeps the "auth" queries, and tokens belong to one user.
export const apiTokenKeys = {
  all: ["api-tokens"] as const,
  lists: () => [...apiTokenKeys.all, "list"] as const,
  list: () => [...apiTokenKeys.lists()] as const,
};

/** The signed-in user's API tokens (never their secrets). */
export const apiTokensQueryOptions = () =>
  queryOptions({
    queryKey: apiTokenKeys.list(),
    queryFn: () => unwrap(api.GET("/api/auth/tokens")),
  });

export function useCreateApiToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: TokenCreateInput) => unwrap(api.POST("/api/auth/tokens", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiTokenKeys.lists() }),
  });
}

export function useRevokeApiToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (tokenId: number) =>
      unwrap(api.DELETE("/api/auth/tokens/{token_id}", { params: { path: { token_id: tokenId } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiTokenKeys.lists() }),
  });
}

/** Changes the signed-in user's password; the server ends their other sessions. */
export function useChangePassword() {
  return useMutation({
    mutationFn: (body: PasswordChangeInput) => unwrap(api.POST("/api/auth/password", { body })),
  });
}
