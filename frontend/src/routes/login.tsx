import { useQuery } from "@tanstack/react-query";
import { createFileRoute, redirect, useRouter } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { meQueryOptions, useLogin } from "@/api/auth";
import { ApiError } from "@/api/client";
import { providersQueryOptions } from "@/api/identity";
import { passwordIsPrimary, SsoSignIn } from "@/components/identity/SsoSignIn";
import { icons } from "@/components/layout/icons";
import { Button, ErrorBanner, Input } from "@/components/ui";
import { safeRedirect } from "@/lib/redirect";

interface LoginSearch {
  redirect?: string | undefined;
  /** Why the last sign-in at the identity provider failed (the callback sends the browser back here). */
  sso_error?: string | undefined;
}

export const Route = createFileRoute("/login")({
  validateSearch: (search: Record<string, unknown>): LoginSearch => ({
    redirect: typeof search.redirect === "string" ? search.redirect : undefined,
    sso_error: typeof search.sso_error === "string" ? search.sso_error : undefined,
  }),
  beforeLoad: async ({ context, search }) => {
    const user = await context.queryClient.ensureQueryData(meQueryOptions());
    if (user) throw redirect({ href: safeRedirect(search.redirect) });
  },
  component: LoginPage,
});

function loginErrorText(error: unknown): string {
  if (error instanceof ApiError && error.status === 401) return "Wrong username or password.";
  if (error instanceof ApiError && error.status === 429) return error.message;
  if (error instanceof ApiError) return error.message;
  return "The server could not be reached. Check that tierpilot is running.";
}

function LoginPage() {
  const router = useRouter();
  const search = Route.useSearch();
  const login = useLogin();
  const providers = useQuery(providersQueryOptions());
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    login.mutate(
      { username: username.trim(), password },
      {
        onSuccess: async () => {
          await router.invalidate();
          await router.navigate({ href: safeRedirect(search.redirect) });
        },
      },
    );
  };

  return (
    <div className="login-page">
      <main className="login-card" aria-labelledby="login-title">
        <div className="login-card__brand">
          {icons.logo}
          <span>tierpilot</span>
        </div>
        <h1 id="login-title">Sign in</h1>
        <p className="muted">Book throughput, move data down the tiers, restore archives and plan costs.</p>
        <SsoSignIn
          providers={providers.data}
          next={safeRedirect(search.redirect)}
          // a password sign-in since replaces the provider's error with its own outcome
          ssoError={login.isIdle ? search.sso_error : undefined}
        />
        <form className="stack" onSubmit={submit}>
          {login.isError ? <ErrorBanner title="Sign-in failed" error={loginErrorText(login.error)} /> : null}
          <Input
            label="Username"
            name="username"
            autoComplete="username"
            autoCapitalize="none"
            spellCheck={false}
            required
            value={username}
            onChange={(e) => setUsername(e.target.value)}
          />
          <Input
            label="Password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          <Button
            type="submit"
            variant={passwordIsPrimary(providers.data) ? "primary" : "secondary"}
            loading={login.isPending}
          >
            Sign in
          </Button>
        </form>
      </main>
    </div>
  );
}
