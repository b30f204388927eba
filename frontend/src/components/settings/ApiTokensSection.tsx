import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { type ApiToken, apiTokensQueryOptions, type NewApiToken, useRevokeApiToken } from "@/api/auth";
import {
  Badge,
  Button,
  Card,
  type Column,
  ConfirmDialog,
  EmptyState,
  QueryState,
  Table,
} from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import { CreateTokenDialog, NewTokenDialog } from "./CreateTokenDialog";

function isExpired(token: ApiToken, now: number): boolean {
  return token.expires_at !== null && new Date(token.expires_at).getTime() <= now;
}

/** The signed-in user's API tokens for scripts: create (secret shown once), list, revoke. */
export function ApiTokensSection() {
  const tokens = useQuery(apiTokensQueryOptions());
  const revoke = useRevokeApiToken();
  const [creating, setCreating] = useState(false);
  const [revealed, setRevealed] = useState<NewApiToken | null>(null);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const now = Date.now();

  const cancelRevoke = () => {
    setRevoking(null);
    revoke.reset();
  };

  const columns: Array<Column<ApiToken>> = [
    { id: "name", header: "Name", cell: (t) => <strong>{t.name}</strong> },
    { id: "created", header: "Created", cell: (t) => formatDateTime(t.created_at), hideOnNarrow: true },
    {
      id: "last-used",
      header: "Last used",
      cell: (t) => (t.last_used_at ? formatDateTime(t.last_used_at) : <span className="muted">never</span>),
    },
    {
      id: "expires",
      header: "Expires",
      cell: (t) => (isExpired(t, now) ? <Badge tone="warning">expired</Badge> : formatDateTime(t.expires_at)),
    },
    {
      id: "actions",
      header: <span className="visually-hidden">Actions</span>,
      label: "Actions",
      align: "end",
      cell: (t) => (
        <Button
          size="sm"
          variant="ghost"
          className="button-danger-text"
          onClick={() => setRevoking(t)}
          aria-label={`Revoke ${t.name}`}
        >
          Revoke
        </Button>
      ),
    },
  ];

  return (
    <Card
      id="api-tokens"
      title="API tokens"
      description="Bearer tokens for scripts that call the tierpilot API as you. A token is shown once, when it is created."
      actions={
        <Button variant="primary" onClick={() => setCreating(true)}>
          Create token
        </Button>
      }
      padded={false}
    >
      <QueryState query={tokens} loading="Loading tokens…" errorTitle="Could not load your tokens" inset>
        {(data) => (
          <Table
            caption="Your API tokens"
            columns={columns}
            rows={data}
            rowKey={(t) => t.id}
            empty={
              <div className="card-inset">
                <EmptyState
                  title="No API tokens"
                  description="Create one for a script; revoke it when the script no longer needs it."
                />
              </div>
            }
          />
        )}
      </QueryState>
      <CreateTokenDialog open={creating} onClose={() => setCreating(false)} onCreated={setRevealed} />
      <NewTokenDialog token={revealed} onClose={() => setRevealed(null)} />
      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this token?"
        description={
          <>
            <strong>{revoking?.name}</strong> stops working at once: the next request that presents it is
            refused.
          </>
        }
        confirmLabel="Revoke token"
        pending={revoke.isPending}
        error={revoke.error}
        onConfirm={() => revoking && revoke.mutate(revoking.id, { onSuccess: () => setRevoking(null) })}
        onCancel={cancelRevoke}
      />
    </Card>
  );
}
