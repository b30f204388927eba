import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  type AccessKey,
  accessKeysQueryOptions,
  type NewAccessKey,
  useCreateAccessKey,
  useDeleteAccessKey,
  useRotateAccessKey,
} from "@/api/keys";
import { overviewQueryOptions } from "@/api/overview";
import {
  Badge,
  Button,
  Card,
  type Column,
  ConfirmDialog,
  EmptyState,
  ErrorBanner,
  QueryState,
  Select,
  type SelectOption,
  Table,
} from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import { NewSecretDialog } from "./NewSecretDialog";

type Pending = { action: "rotate" | "delete"; key: AccessKey } | null;

// A temporary key suits a CI job or a collaborator's short visit: nothing to remember to delete afterwards.
const HOUR = 3600;
export const KEY_LIFETIMES: SelectOption[] = [
  { value: "", label: "Never expires" },
  { value: String(HOUR), label: "1 hour" },
  { value: String(24 * HOUR), label: "1 day" },
  { value: String(7 * 24 * HOUR), label: "7 days" },
  { value: String(30 * 24 * HOUR), label: "30 days" },
  { value: String(90 * 24 * HOUR), label: "90 days" },
];

function isExpired(key: AccessKey, now: number): boolean {
  return key.expires_at != null && new Date(key.expires_at).getTime() <= now;
}

function KeyStatus({ accessKey }: { accessKey: AccessKey }) {
  if (isExpired(accessKey, Date.now())) return <Badge tone="danger">expired</Badge>;
  return (
    <Badge tone={accessKey.active ? "success" : "neutral"}>{accessKey.active ? "active" : "inactive"}</Badge>
  );
}

/** The signed-in user's S3 credentials for the gateway: list, create, rotate, delete. */
export function AccessKeysSection() {
  const keys = useQuery(accessKeysQueryOptions());
  const gatewayUrl = useQuery({ ...overviewQueryOptions(), select: (o) => o.gateway_url });
  const create = useCreateAccessKey();
  const rotate = useRotateAccessKey();
  const remove = useDeleteAccessKey();
  const [pending, setPending] = useState<Pending>(null);
  const [revealed, setRevealed] = useState<{ key: NewAccessKey; title: string } | null>(null);
  const [lifetime, setLifetime] = useState("");

  const closeSecret = () => {
    // Drop every copy of the secret held by the page: dialog state and the mutations' results.
    setRevealed(null);
    create.reset();
    rotate.reset();
  };

  const confirm = () => {
    if (!pending) return;
    if (pending.action === "rotate") {
      rotate.mutate(pending.key.access_key_id, {
        onSuccess: (key) => {
          setPending(null);
          setRevealed({ key, title: "Access key rotated" });
        },
      });
    } else {
      remove.mutate(pending.key.access_key_id, { onSuccess: () => setPending(null) });
    }
  };

  const cancel = () => {
    setPending(null);
    rotate.reset();
    remove.reset();
  };

  const columns: Array<Column<AccessKey>> = [
    { id: "id", header: "Access key ID", cell: (k) => <code>{k.access_key_id}</code> },
    { id: "created", header: "Created", cell: (k) => formatDateTime(k.created_at), hideOnNarrow: true },
    {
      id: "expires",
      header: "Expires",
      cell: (k) => (k.expires_at ? formatDateTime(k.expires_at) : <span className="muted">never</span>),
    },
    { id: "status", header: "Status", cell: (k) => <KeyStatus accessKey={k} /> },
    {
      id: "actions",
      header: <span className="visually-hidden">Actions</span>,
      align: "end",
      cell: (k) => (
        <div className="table-actions">
          <Button
            size="sm"
            onClick={() => setPending({ action: "rotate", key: k })}
            aria-label={`Rotate ${k.access_key_id}`}
          >
            Rotate
          </Button>
          <Button
            size="sm"
            variant="ghost"
            className="button-danger-text"
            onClick={() => setPending({ action: "delete", key: k })}
            aria-label={`Delete ${k.access_key_id}`}
          >
            Delete
          </Button>
        </div>
      ),
    },
  ];

  return (
    <Card
      id="access-keys"
      title="S3 access keys"
      description={
        <>
          Credentials for the S3 gateway
          {gatewayUrl.data ? (
            <>
              {" "}
              at <code>{gatewayUrl.data}</code>
            </>
          ) : null}
          . A secret is shown once, when the key is created or rotated. A key with a lifetime is refused
          (ExpiredToken) once it has expired.
        </>
      }
      actions={
        <div className="key-create">
          <Select
            label="Lifetime"
            options={KEY_LIFETIMES}
            value={lifetime}
            onChange={(e) => setLifetime(e.target.value)}
          />
          <Button
            variant="primary"
            loading={create.isPending}
            onClick={() =>
              create.mutate(lifetime ? Number(lifetime) : null, {
                onSuccess: (key) =>
                  setRevealed({ key, title: key.expires_at ? "New temporary access key" : "New access key" }),
              })
            }
          >
            Create key
          </Button>
        </div>
      }
      padded={false}
    >
      {create.isError ? (
        <div className="card-inset">
          <ErrorBanner title="Could not create a key" error={create.error} />
        </div>
      ) : null}
      <QueryState query={keys} loading="Loading keys…" errorTitle="Could not load your keys" inset>
        {(data) => (
          <Table
            caption="Your S3 access keys"
            columns={columns}
            rows={data}
            rowKey={(k) => k.access_key_id}
            empty={
              <div className="card-inset">
                <EmptyState
                  title="No access keys"
                  description="Create a key to use the S3 gateway with the AWS CLI, boto3, rclone or s3cmd."
                />
              </div>
            }
          />
        )}
      </QueryState>

      <ConfirmDialog
        open={pending?.action === "rotate"}
        title="Rotate this key?"
        description={
          <>
            <code>{pending?.key.access_key_id}</code> stops working at once and a new key with a new secret
            replaces it. Update every client that uses it.
          </>
        }
        confirmLabel="Rotate key"
        tone="primary"
        pending={rotate.isPending}
        error={rotate.error}
        onConfirm={confirm}
        onCancel={cancel}
      />
      <ConfirmDialog
        open={pending?.action === "delete"}
        title="Delete this key?"
        description={
          <>
            <code>{pending?.key.access_key_id}</code> stops working at once. Clients using it get
            InvalidAccessKeyId.
          </>
        }
        confirmLabel="Delete key"
        pending={remove.isPending}
        error={remove.error}
        onConfirm={confirm}
        onCancel={cancel}
      />
      <NewSecretDialog secret={revealed?.key ?? null} title={revealed?.title ?? ""} onClose={closeSecret} />
    </Card>
  );
}
