import { createFileRoute, Link, redirect } from "@tanstack/react-router";
import { AuditLog } from "@/components/admin/AuditLog";
import { PageHeader } from "@/components/ui";

/** Admins only: the audit log of security-relevant events. */
export const Route = createFileRoute("/_app/settings_/audit")({
  beforeLoad: ({ context }) => {
    if (!context.user.is_admin) throw redirect({ to: "/settings" });
  },
  component: AuditPage,
});

function AuditPage() {
  return (
    <>
      <PageHeader
        title="Audit log"
        description={
          <>
            Sign-ins and failures, tokens and keys, user and role changes, bucket deletions, capacity and tier
            changes. Kept for the retention period (<code>TIERPILOT_AUDIT_RETENTION_DAYS</code>).{" "}
            <Link to="/settings">Back to settings</Link>
          </>
        }
      />
      <AuditLog />
    </>
  );
}
