import { createFileRoute, Link } from "@tanstack/react-router";
import { accessKeysQueryOptions } from "@/api/keys";
import { UsersSection } from "@/components/admin/UsersSection";
import { AccessKeysSection } from "@/components/settings/AccessKeysSection";
import { ApiTokensSection } from "@/components/settings/ApiTokensSection";
import { ChangePasswordSection } from "@/components/settings/ChangePasswordSection";
import { TiersSection } from "@/components/settings/TiersSection";
import { PageHeader } from "@/components/ui";

export const Route = createFileRoute("/_app/settings")({
  loader: ({ context }) => {
    // Start the request early; the section renders its own loading and error states.
    void context.queryClient.prefetchQuery(accessKeysQueryOptions());
  },
  component: SettingsPage,
});

function SettingsPage() {
  const { user } = Route.useRouteContext();
  return (
    <>
      <PageHeader
        title="Settings"
        description={
          user.is_admin
            ? "Your S3 access keys, API tokens and password; the storage tiers, users, sign-in and audit log of this installation."
            : "Your S3 access keys, API tokens and password."
        }
      />
      <nav aria-label="Settings sections" className="section-nav print-hide">
        <a href="#access-keys">S3 access keys</a>
        <a href="#api-tokens">API tokens</a>
        <a href="#password">Password</a>
        {user.is_admin ? (
          <>
            <a href="#tiers">Tiers</a>
            <a href="#users">Users</a>
            <Link to="/settings/identity">Identity</Link>
            <Link to="/settings/audit">Audit log</Link>
          </>
        ) : null}
      </nav>
      <AccessKeysSection />
      <ApiTokensSection />
      <ChangePasswordSection />
      {user.is_admin ? (
        <>
          <TiersSection />
          <UsersSection currentUserId={user.id} />
        </>
      ) : null}
    </>
  );
}
