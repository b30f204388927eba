import { createFileRoute, Link, redirect } from "@tanstack/react-router";
import { IdentitySettings } from "@/components/identity/IdentitySettings";
import { PageHeader } from "@/components/ui";

/** Admins only: institutional sign-in (OpenID Connect, LDAP), the group mapping and a dry run of it. */
export const Route = createFileRoute("/_app/settings_/identity")({
  beforeLoad: ({ context }) => {
    if (!context.user.is_admin) throw redirect({ to: "/settings" });
  },
  component: IdentityPage,
});

function IdentityPage() {
  return (
    <>
      <PageHeader
        title="Identity"
        description={
          <>
            How people sign in and which projects their groups give them, as the server's environment sets it:{" "}
            <code>TIERPILOT_OIDC_*</code>, <code>TIERPILOT_LDAP_*</code> and{" "}
            <code>TIERPILOT_GROUP_MAPPING</code>. <Link to="/settings">Back to settings</Link>
          </>
        }
      />
      <IdentitySettings />
    </>
  );
}
