import { type FormEvent, useState } from "react";
import type { User } from "@/api/auth";
import { ApiError } from "@/api/client";
import { useDeleteUser, useResetPassword, useUpdateUser } from "@/api/users";
import { Button, ConfirmDialog, CopyField, Dialog, ErrorBanner, Input } from "@/components/ui";

const MIN_PASSWORD = 8;
const PASSWORD_ALPHABET = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** A random password an admin can pass on by hand (no look-alike characters). */
export function generatePassword(length = 16): string {
  const bytes = new Uint8Array(length);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => PASSWORD_ALPHABET[b % PASSWORD_ALPHABET.length]).join("");
}

export type UserAction = "disable" | "enable" | "role" | "password" | "delete";

/** Asks before disabling a user or changing the role; enabling needs no confirmation. */
export function StateOrRoleDialog({
  user,
  action,
  onClose,
}: {
  user: User | null;
  action: "disable" | "role" | null;
  onClose: () => void;
}) {
  const update = useUpdateUser();
  const close = () => {
    update.reset();
    onClose();
  };
  const toAdmin = user ? !user.is_admin : false;
  const run = () => {
    if (!user || !action) return;
    const body =
      action === "disable" ? { disabled: true } : ({ role: toAdmin ? "admin" : "member" } as const);
    update.mutate({ userId: user.id, body }, { onSuccess: close });
  };
  return (
    <>
      <ConfirmDialog
        open={user !== null && action === "disable"}
        title={`Disable ${user?.username ?? ""}?`}
        description={
          <>
            <strong>{user?.username}</strong> is signed out at once; their API tokens and S3 keys are refused
            until you enable the account again. Their buckets and data stay as they are.
          </>
        }
        confirmLabel="Disable user"
        pending={update.isPending}
        error={update.error}
        onConfirm={run}
        onCancel={close}
      />
      <ConfirmDialog
        open={user !== null && action === "role"}
        title={toAdmin ? `Make ${user?.username ?? ""} an admin?` : `Make ${user?.username ?? ""} a member?`}
        description={
          toAdmin
            ? "Admins see every user's buckets and manage tiers, capacity and users."
            : "Members see only their own buckets, reservations and restores. The change applies to their next request."
        }
        confirmLabel={toAdmin ? "Make admin" : "Make member"}
        tone="primary"
        pending={update.isPending}
        error={update.error}
        onConfirm={run}
        onCancel={close}
      />
    </>
  );
}

/** Sets a user's password: a generated one the admin may replace, shown until the dialog closes. */
export function ResetPasswordDialog({ user, onClose }: { user: User | null; onClose: () => void }) {
  const reset = useResetPassword();
  const [password, setPassword] = useState("");
  const [touched, setTouched] = useState(false);
  const [shownFor, setShownFor] = useState<number | null>(null);
  // A fresh suggestion each time the dialog opens for someone.
  if (user && shownFor !== user.id) {
    setShownFor(user.id);
    setPassword(generatePassword());
    setTouched(false);
  }
  const close = () => {
    // Drop every copy of the password held by the page.
    setPassword("");
    setShownFor(null);
    reset.reset();
    onClose();
  };
  const error =
    touched && password.length < MIN_PASSWORD ? `At least ${MIN_PASSWORD} characters.` : undefined;
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setTouched(true);
    if (!user || password.length < MIN_PASSWORD) return;
    reset.mutate({ userId: user.id, password });
  };
  return (
    <Dialog
      open={user !== null}
      onClose={close}
      title={`Reset the password of ${user?.username ?? ""}`}
      description={
        reset.isSuccess
          ? "Pass the new password on in person; it is not shown again."
          : "Their dashboard sessions end. Their API tokens and S3 keys keep working."
      }
    >
      {reset.isSuccess ? (
        <div className="stack">
          <p role="status">The password of {user?.username} is set.</p>
          <CopyField label="New password" value={password} secret />
          <div className="ui-dialog__footer">
            <Button variant="primary" onClick={close}>
              Done
            </Button>
          </div>
        </div>
      ) : (
        <form className="stack" onSubmit={submit} noValidate>
          {reset.isError ? <ErrorBanner title="Password not set" error={reset.error} /> : null}
          <Input
            label="New password"
            autoComplete="off"
            spellCheck={false}
            hint={`Generated for you; type another if you prefer (at least ${MIN_PASSWORD} characters).`}
            value={password}
            error={error}
            onChange={(e) => setPassword(e.target.value)}
          />
          <div className="ui-dialog__footer">
            <Button onClick={close}>Cancel</Button>
            <Button type="submit" variant="primary" loading={reset.isPending}>
              Set password
            </Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

/** Deletes a user after saying what happens to their buckets; a refusal (409: owns buckets) is spelled out. */
export function DeleteUserDialog({ user, onClose }: { user: User | null; onClose: () => void }) {
  const remove = useDeleteUser();
  const close = () => {
    remove.reset();
    onClose();
  };
  const ownsBuckets = remove.error instanceof ApiError && remove.error.status === 409;
  return (
    <Dialog
      open={user !== null}
      onClose={close}
      role="alertdialog"
      size="sm"
      title={`Delete ${user?.username ?? ""}?`}
      description={
        <>
          Deletes the account with its S3 keys, API tokens, reservations, restores and notifications. Buckets
          are never deleted or handed to someone else: while <strong>{user?.username}</strong> owns a bucket,
          the deletion is refused. Delete or empty their buckets first, or disable the user instead.
        </>
      }
      footer={
        <>
          <Button onClick={close} data-autofocus>
            Cancel
          </Button>
          <Button
            variant="danger"
            loading={remove.isPending}
            disabled={ownsBuckets}
            onClick={() => user && remove.mutate(user.id, { onSuccess: close })}
          >
            Delete user
          </Button>
        </>
      }
    >
      {remove.isError ? (
        <ErrorBanner
          title={
            ownsBuckets ? `${user?.username ?? "This user"} still owns buckets` : "The user was not deleted"
          }
          error={remove.error}
        />
      ) : null}
    </Dialog>
  );
}
