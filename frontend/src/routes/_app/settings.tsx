import { createFileRoute } from "@tanstack/react-router";
import { accessKeysQueryOptions } from "@/api/keys";
import { AccessKeysSection } from "@/components/settings/AccessKeysSection";
import { TiersSection } from "@/components/settings/TiersSection";
import { UsersSection } from "@/components/settings/UsersSection";
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
            ? "Your S3 access keys, the storage tiers and the users of this installation."
            : "Your S3 access keys."
        }
      />
      {user.is_admin ? (
        <nav aria-label="Settings sections" className="section-nav print-hide">
          <a href="#access-keys">S3 access keys</a>
          <a href="#tiers">Tiers</a>
          <a href="#users">Users</a>
        </nav>
      ) : null}
      <AccessKeysSection />
      {user.is_admin ? (
        <>
          <TiersSection />
          <UsersSection />
        </>
      ) : null}
    </>
  );
}
