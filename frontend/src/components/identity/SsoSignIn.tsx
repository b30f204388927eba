import { oidcLoginUrl, type SignInProviders } from "@/api/identity";
import { ErrorBanner } from "@/components/ui";

/**
 * The login page's institutional part: why the last sign-in at the provider failed, the "Sign in with …"
 * link, and what the password form below accepts.
 */
export function SsoSignIn({
  providers,
  next,
  ssoError,
}: {
  /** Undefined while asked (or when the server could not say): the password form alone is shown. */
  providers: SignInProviders | undefined;
  next: string;
  ssoError?: string | undefined;
}) {
  return (
    <>
      {ssoError ? <ErrorBanner title="Sign-in through your institution failed" error={ssoError} /> : null}
      {providers?.oidc ? (
        <>
          {/* a link, not a button: the sign-in is a navigation to the provider and back */}
          <a className="ui-button ui-button--primary ui-button--md login-sso" href={oidcLoginUrl(next)}>
            Sign in with {providers.oidc_name}
          </a>
          <p className="login-divider">
            <span>or</span>
          </p>
        </>
      ) : null}
      {providers ? <PasswordHint providers={providers} /> : null}
    </>
  );
}

/** What the password form below takes: a directory account, a local one, or only a break-glass admin's. */
function PasswordHint({ providers }: { providers: SignInProviders }) {
  let hint: string | null = null;
  if (providers.ldap) {
    hint = providers.local_passwords
      ? "Your directory (LDAP) username and password work here, as do tierpilot accounts."
      : "Sign in with your directory (LDAP) username and password.";
  } else if (!providers.local_passwords) {
    hint = "Passwords are for administrators' break-glass accounts only.";
  }
  return hint ? <p className="muted login-hint">{hint}</p> : null;
}

/** Whether the password form's button is the page's main action (no provider button above it). */
export function passwordIsPrimary(providers: SignInProviders | undefined): boolean {
  return !providers?.oidc;
}
