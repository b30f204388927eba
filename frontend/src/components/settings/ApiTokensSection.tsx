import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import {
  type ApiToken,
  apiTokensQueryOptions,
  type NewApiToken,
  useCreateApiToken,
  useRevokeApiToken,
} from "@/api/auth";
import {
  Badge,
  Button,
  Card,
  type Column,
  ConfirmDialog,
  CopyField,
  Dialog,
  EmptyState,
  ErrorBanner,
  Input,
  QueryState,
  Select,
  Table,
} from "@/components/ui";
import { formatDateTime } from "@/lib/format";

const EXPIRY_OPTIONS = [
  { value: "7", label: "7 days" },
  { value: "30", label: "30 days" },
  { value: "90", label: "90 days" },
  { value: "180", label: "180 days" },
  { value: "366", label: "1 year" },
];

function isExpired(token: ApiToken, now: number): boolean {
  return token.expires_at !== null && new Date(token.expires_at).getTime() <= now;
}

function CreateTokenDialog({
  open,
  onClose,
  onCreated,
}: {
  open: boolean;
  onClose: () => void;
  onCreated: (token: NewApiToken) => void;
}) {
  const create = useCreateApiToken();
  const [name, setName] = useState("");
  const [days, setDays] = useState("90");
  const [touched, setTouched] = useState(false);
  const nameError =
    touched && !name.trim() ? "Name the token after the script or machine that uses it." : undefined;

  const close = () => {
    setName("");
    setDays("90");
    setTouched(false);
    create.reset();
    onClose();
  };

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setTouched(true);
    if (!name.trim()) return;
    create.mutate(
      { name: name.trim(), expires_in_days: Number(days) },
      {
        onSuccess: (token) => {
          close();
          onCreated(token);
        },
      },
    );
  };

  return (
    <Dialog open={open} onClose={close} title="Create API token">
      <form className="stack" onSubmit={submit} noValidate>
        {create.isError ? <ErrorBanner title="Could not create the token" error={create.error} /> : null}
        <Input
          label="Name"
          hint="e.g. backup script on lab-server-2"
          autoComplete="off"
          maxLength={128}
          value={name}
          error={nameError}
          onChange={(e) => setName(e.target.value)}
          data-autofocus
        />
        <Select
          label="Expires after"
          options={EXPIRY_OPTIONS}
          value={days}
          onChange={(e) => setDays(e.target.value)}
        />
        <div className="ui-dialog__footer">
          <Button onClick={close}>Cancel</Button>
          <Button type="submit" variant="primary" loading={create.isPending}>
            Create token
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

/** Shows a new token's secret once; the caller drops it on close. */
function NewTokenDialog({ token, onClose }: { token: NewApiToken | null; onClose: () => void }) {
  return (
    <Dialog
      open={token !== null}
      onClose={onClose}
      title={token ? `API token “${token.name}”` : ""}
      description="Copy the token now. It is shown only this once: tierpilot keeps only its hash."
      footer={
        <Button variant="primary" onClick={onClose}>
          I have stored the token
        </Button>
      }
    >
      {token ? (
        <div className="new-secret" data-testid="new-token">
          <CopyField label="Token" value={token.token} secret />
          <div className="ui-copyfield">
            <span className="ui-field__label">Use it as a bearer token</span>
            <pre className="snippet">{`curl -H "Authorization: Bearer ${token.token}" ${globalThis.location?.origin ?? ""}/api/auth/me`}</pre>
          </div>
          <p className="muted">Expires {formatDateTime(token.expires_at)}.</p>
        </div>
      ) : null}
    </Dialog>
  );
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
