import { useQuery } from "@tanstack/react-query";
import { type IdentityStatus, identityStatusQueryOptions, type SignIn } from "@/api/identity";
import { Badge, Card, type Column, EmptyState, QueryState, Table } from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import { DryRunCard } from "./DryRunCard";
import { MappingTable } from "./MappingTable";
import "./identity.css";

const VIA: Record<string, string> = { oidc: "OpenID Connect", ldap: "LDAP", password: "password" };

const signInColumns: Array<Column<SignIn>> = [
  { id: "at", header: "When", cell: (s) => formatDateTime(s.at) },
  { id: "username", header: "User", cell: (s) => <strong>{s.username}</strong> },
  { id: "via", header: "Through", cell: (s) => VIA[s.via] ?? s.via },
];

function OidcState({ status }: { status: IdentityStatus }) {
  if (!status.oidc_configured) return <Badge tone="neutral">not configured</Badge>;
  if (status.oidc_error) {
    return (
      <>
        <Badge tone="danger">unreachable</Badge> <span className="identity-error">{status.oidc_error}</span>
      </>
    );
  }
  return (
    <>
      <Badge tone="success">ready</Badge> <code>{status.oidc_issuer}</code>
    </>
  );
}

function ProviderFacts({ status }: { status: IdentityStatus }) {
  return (
    <dl className="identity-facts">
      <dt>OpenID Connect</dt>
      <dd>
        <OidcState status={status} />
      </dd>
      <dt>LDAP directory</dt>
      <dd>
        {status.ldap_configured ? (
          <>
            <Badge tone="success">configured</Badge> <code>{status.ldap_url}</code>
          </>
        ) : (
          <Badge tone="neutral">not configured</Badge>
        )}
      </dd>
      <dt>Local passwords</dt>
      <dd>
        {status.local_passwords ? (
          <Badge tone="info">on</Badge>
        ) : (
          <>
            <Badge tone="warning">off</Badge>{" "}
            {status.break_glass_admins.length > 0
              ? `but for the break-glass admins ${status.break_glass_admins.join(", ")}`
              : "for everyone: no break-glass admin is named"}
          </>
        )}
      </dd>
    </dl>
  );
}

/** Admins: how people sign in here, what their groups give them, who signed in lately, and a dry run. */
export function IdentitySettings() {
  const status = useQuery(identityStatusQueryOptions());
  return (
    <>
      <Card
        id="providers"
        title="Sign-in providers"
        description="Asked now: the provider's discovery document."
      >
        <QueryState
          query={status}
          loading="Asking the identity provider…"
          errorTitle="Could not load the status"
        >
          {(data) => <ProviderFacts status={data} />}
        </QueryState>
      </Card>
      <Card
        id="mapping"
        title="Groups → projects"
        description={
          <>
            At every sign-in a user's role in each project named here is set from their groups (the strongest
            wins; none removes them). From <code>TIERPILOT_GROUP_MAPPING</code>.
          </>
        }
        padded={false}
      >
        <QueryState query={status} loading={false} inset>
          {(data) => (
            <MappingTable
              caption="The group mapping"
              rows={data.mapping}
              empty={
                <div className="card-inset">
                  <EmptyState
                    title="No group mapping"
                    description="Groups give no project: admins add people to projects by hand."
                  />
                </div>
              }
            />
          )}
        </QueryState>
      </Card>
      <Card id="sign-ins" title="Latest sign-ins" padded={false}>
        <QueryState query={status} loading={false} inset>
          {(data) => (
            <Table
              caption="Latest sign-ins"
              columns={signInColumns}
              rows={data.last_sign_ins}
              rowKey={(s) => `${s.at} ${s.username}`}
              empty={
                <div className="card-inset">
                  <EmptyState title="No sign-ins yet" />
                </div>
              }
            />
          )}
        </QueryState>
      </Card>
      <DryRunCard />
    </>
  );
}
