import { type FormEvent, useState } from "react";
import { useChangePassword } from "@/api/auth";
import { Button, Card, Checkbox, ErrorBanner, Input } from "@/components/ui";

const MIN_PASSWORD = 8;

/** The signed-in user's password: the current one is required; other sessions end on success, API tokens and
 * S3 keys too when the user asks (a leaked password may have made some). */
export function ChangePasswordSection() {
  const change = useChangePassword();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeat, setRepeat] = useState("");
  const [touched, setTouched] = useState(false);
  const [revoke, setRevoke] = useState(false);

  const currentError = touched && !current ? "Enter your current password." : undefined;
  const nextError =
    touched && next.length < MIN_PASSWORD
      ? `At least ${MIN_PASSWORD} characters.`
      : touched && next === current
        ? "Choose a password different from the current one."
        : undefined;
  const repeatError = touched && repeat !== next ? "The two new passwords differ." : undefined;

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setTouched(true);
    if (!current || next.length < MIN_PASSWORD || next === current || repeat !== next) return;
    change.mutate(
      { current_password: current, new_password: next, revoke_tokens: revoke, revoke_s3_keys: revoke },
      {
        onSuccess: () => {
          setCurrent("");
          setNext("");
          setRepeat("");
          setTouched(false);
          setRevoke(false);
        },
      },
    );
  };

  return (
    <Card
      id="password"
      title="Change password"
      description="Your other dashboard sessions are signed out; API tokens and S3 keys keep working unless you revoke them here."
    >
      <form className="stack" onSubmit={submit} noValidate aria-label="Change password">
        {change.isError ? <ErrorBanner title="Password not changed" error={change.error} /> : null}
        {change.isSuccess ? (
          <p role="status" className="muted">
            Password changed. Your other sessions were signed out.{" "}
            {change.data.tokens_revoked || change.data.s3_keys_revoked
              ? `Revoked ${change.data.tokens_revoked} API token(s) and ${change.data.s3_keys_revoked} S3 key(s).`
              : `${change.data.tokens_kept} API token(s) and ${change.data.s3_keys_kept} S3 key(s) keep working.`}
          </p>
        ) : null}
        <div className="form-grid form-grid--3">
          <Input
            label="Current password"
            type="password"
            autoComplete="current-password"
            value={current}
            error={currentError}
            onChange={(e) => setCurrent(e.target.value)}
          />
          <Input
            label="New password"
            type="password"
            autoComplete="new-password"
            hint={`At least ${MIN_PASSWORD} characters.`}
            value={next}
            error={nextError}
            onChange={(e) => setNext(e.target.value)}
          />
          <Input
            label="Repeat new password"
            type="password"
            autoComplete="new-password"
            value={repeat}
            error={repeatError}
            onChange={(e) => setRepeat(e.target.value)}
          />
        </div>
        <Checkbox
          label="Also revoke my API tokens and S3 keys"
          hint="Scripts and S3 clients using them stop working; make new ones afterwards."
          checked={revoke}
          onChange={(e) => setRevoke(e.target.checked)}
        />
        <div>
          <Button type="submit" variant="primary" loading={change.isPending}>
            Change password
          </Button>
        </div>
      </form>
    </Card>
  );
}
