import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { User } from "@/api/auth";
import type { NewAccessKey } from "@/api/keys";
import { usersQueryOptions, useUpdateUser } from "@/api/users";
import { NewSecretDialog } from "@/components/settings/NewSecretDialog";
import { Badge, Button, Card, type Column, ErrorBanner, QueryState, Table } from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import { CreateUserDialog } from "./CreateUserDialog";
import { DeleteUserDialog, ResetPasswordDialog, StateOrRoleDialog, type UserAction } from "./UserActions";

/** Admins: every user with role, state and last sign-in; create, disable/enable, reset, change role, delete. */
export function UsersSection({ currentUserId }: { currentUserId: number }) {
  const users = useQuery(usersQueryOptions());
  const enable = useUpdateUser();
  const [creating, setCreating] = useState(false);
  const [revealed, setRevealed] = useState<{ username: string; key: NewAccessKey } | null>(null);
  const [pending, setPending] = useState<{ action: UserAction; user: User } | null>(null);
  const close = () => setPending(null);
  const act = (action: UserAction, user: User) => {
    if (action === "enable") enable.mutate({ userId: user.id, body: { disabled: false } });
    else setPending({ action, user });
  };

  const columns: Array<Column<User>> = [
    {
      id: "username",
      header: "Username",
      cell: (u) => (
        <span className="row">
          <strong>{u.username}</strong>
          {u.id === currentUserId ? <Badge tone="neutral">you</Badge> : null}
        </span>
      ),
    },
    {
      id: "role",
      header: "Role",
      cell: (u) => <Badge tone={u.is_admin ? "info" : "neutral"}>{u.role}</Badge>,
    },
    {
      id: "state",
      header: "State",
      cell: (u) =>
        u.disabled ? (
          <Badge tone="danger" title={u.disabled_at ? `since ${formatDateTime(u.disabled_at)}` : undefined}>
            disabled
          </Badge>
        ) : (
          <Badge tone="success">active</Badge>
        ),
    },
    {
      id: "last-login",
      header: "Last sign-in",
      cell: (u) => (u.last_login_at ? formatDateTime(u.last_login_at) : <span className="muted">—</span>),
    },
    { id: "created", header: "Created", cell: (u) => formatDateTime(u.created_at), hideOnNarrow: true },
    {
      id: "actions",
      header: <span className="visually-hidden">Actions</span>,
      label: "Actions",
      align: "end",
      cell: (u) =>
        u.id === currentUserId ? (
          <span className="muted">Change your own password above</span>
        ) : (
          <div className="table-actions">
            <Button
              size="sm"
              onClick={() => act(u.disabled ? "enable" : "disable", u)}
              loading={enable.isPending && enable.variables?.userId === u.id}
              aria-label={`${u.disabled ? "Enable" : "Disable"} ${u.username}`}
            >
              {u.disabled ? "Enable" : "Disable"}
            </Button>
            <Button
              size="sm"
              onClick={() => act("password", u)}
              aria-label={`Reset password of ${u.username}`}
            >
              Reset password
            </Button>
            <Button size="sm" onClick={() => act("role", u)} aria-label={`Change role of ${u.username}`}>
              {u.is_admin ? "Make member" : "Make admin"}
            </Button>
            <Button
              size="sm"
              variant="ghost"
              className="button-danger-text"
              onClick={() => act("delete", u)}
              aria-label={`Delete ${u.username}`}
            >
              Delete
            </Button>
          </div>
        ),
    },
  ];

  return (
    <Card
      id="users"
      title="Users"
      description="Who can sign in. Every new user gets an S3 access key. A disabled user is signed out at once and their tokens and S3 keys are refused."
      actions={
        <Button variant="primary" onClick={() => setCreating(true)}>
          Create user
        </Button>
      }
      padded={false}
    >
      <QueryState query={users} loading="Loading users…" errorTitle="Could not load users" inset>
        {(data) => (
          <>
            {enable.isError ? (
              <div className="card-inset">
                <ErrorBanner title="Could not enable the user" error={enable.error} />
              </div>
            ) : null}
            <Table caption="Users" columns={columns} rows={data} rowKey={(u) => u.id} />
          </>
        )}
      </QueryState>
      <StateOrRoleDialog
        user={pending && (pending.action === "disable" || pending.action === "role") ? pending.user : null}
        action={pending?.action === "disable" || pending?.action === "role" ? pending.action : null}
        onClose={close}
      />
      <ResetPasswordDialog user={pending?.action === "password" ? pending.user : null} onClose={close} />
      <DeleteUserDialog user={pending?.action === "delete" ? pending.user : null} onClose={close} />
      <CreateUserDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(username, key) => setRevealed({ username, key })}
      />
      <NewSecretDialog
        secret={revealed?.key ?? null}
        title={revealed ? `Access key for ${revealed.username}` : ""}
        onClose={() => setRevealed(null)}
      />
    </Card>
  );
}
