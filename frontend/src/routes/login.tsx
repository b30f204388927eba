import { createFileRoute, redirect, useRouter } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { meQueryOptions, useLogin } from "@/api/auth";
import { ApiError } from "@/api/client";
import { icons } from "@/components/layout/icons";
import { Button, ErrorBanner, Input } from "@/components/ui";
import { safeRedirect } from "@/lib/redirect";

interface LoginSearch {
  redirect?: string | undefined;
}

export const Route = createFileRoute("/login")({
  validateSearch: (search: Record<string, unknown>): LoginSearch => ({
    redirect: typeof search.redirect === "string" ? search.redirect : undefined,
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
          <Button type="submit" variant="primary" loading={login.isPending}>
            Sign in
          </Button>
        </form>
      </main>
    </div>
  );
}
