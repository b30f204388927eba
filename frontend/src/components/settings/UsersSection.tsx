import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import type { User } from "@/api/auth";
import type { NewAccessKey } from "@/api/keys";
import { useCreateUser, usersQueryOptions } from "@/api/users";
import {
  Badge,
  Button,
  Card,
  Checkbox,
  type Column,
  Dialog,
  ErrorBanner,
  Input,
  LoadingState,
  Table,
} from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import { NewSecretDialog } from "./NewSecretDialog";

const columns: Array<Column<User>> = [
  { id: "username", header: "Username", cell: (u) => <strong>{u.username}</strong> },
  {
    id: "role",
    header: "Role",
    cell: (u) => <Badge tone={u.is_admin ? "info" : "neutral"}>{u.role}</Badge>,
  },
  { id: "created", header: "Created", cell: (u) => formatDateTime(u.created_at), hideOnNarrow: true },
];

const MIN_PASSWORD = 8;

function CreateUserDialog({
  open,
  onClose,
  onCreated,
}: {
  open: boolean;
  onClose: () => void;
  onCreated: (username: string, key: NewAccessKey) => void;
}) {
  const create = useCreateUser();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [isAdmin, setIsAdmin] = useState(false);
  const [touched, setTouched] = useState(false);

  const passwordError =
    touched && password.length < MIN_PASSWORD ? `At least ${MIN_PASSWORD} characters.` : undefined;
  const usernameError = touched && !username.trim() ? "Enter a username." : undefined;

  const close = () => {
    setUsername("");
    setPassword("");
    setIsAdmin(false);
    setTouched(false);
    create.reset();
    onClose();
  };

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setTouched(true);
    if (!username.trim() || password.length < MIN_PASSWORD) return;
    create.mutate(
      { username: username.trim(), password, is_admin: isAdmin },
      {
        onSuccess: (created) => {
          const name = created.user.username;
          close();
          onCreated(name, created.access_key);
        },
      },
    );
  };

  return (
    <Dialog open={open} onClose={close} title="Create user">
      <form className="stack" onSubmit={submit} noValidate>
        {create.isError ? <ErrorBanner title="Could not create the user" error={create.error} /> : null}
        <Input
          label="Username"
          hint="Letters, digits, '.', '_' or '-'."
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          value={username}
          error={usernameError}
          onChange={(e) => setUsername(e.target.value)}
        />
        <Input
          label="Password"
          type="password"
          autoComplete="new-password"
          hint={`At least ${MIN_PASSWORD} characters. Tell the user in person; they can sign in at once.`}
          value={password}
          error={passwordError}
          onChange={(e) => setPassword(e.target.value)}
        />
        <Checkbox
          label="Administrator"
          hint="Admins see every user's buckets and manage tiers and users."
          checked={isAdmin}
          onChange={(e) => setIsAdmin(e.target.checked)}
        />
        <div className="ui-dialog__footer">
          <Button onClick={close}>Cancel</Button>
          <Button type="submit" variant="primary" loading={create.isPending}>
            Create user
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

/** Admins: every user, and a form to add one (who gets an S3 key, shown once). */
export function UsersSection() {
  const users = useQuery(usersQueryOptions());
  const [creating, setCreating] = useState(false);
  const [revealed, setRevealed] = useState<{ username: string; key: NewAccessKey } | null>(null);
  return (
    <Card
      id="users"
      title="Users"
      description="Who can sign in. Every new user gets an S3 access key."
      actions={
        <Button variant="primary" onClick={() => setCreating(true)}>
          Create user
        </Button>
      }
      padded={false}
    >
      {users.isPending ? (
        <LoadingState label="Loading users…" />
      ) : users.isError ? (
        <div className="card-inset">
          <ErrorBanner title="Could not load users" error={users.error} onRetry={() => users.refetch()} />
        </div>
      ) : (
        <Table caption="Users" columns={columns} rows={users.data} rowKey={(u) => u.id} />
      )}
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
