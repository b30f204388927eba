import { type FormEvent, useState } from "react";
import type { NewAccessKey } from "@/api/keys";
import { useCreateUser } from "@/api/users";
import { Button, Checkbox, Dialog, ErrorBanner, Input } from "@/components/ui";

const MIN_PASSWORD = 8;

/** Creates a user with a password to hand over in person, and shows their first access key. */
export function CreateUserDialog({
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
