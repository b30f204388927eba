import { type FormEvent, useState } from "react";
import { type NewApiToken, useCreateApiToken } from "@/api/auth";
import { Button, CopyField, Dialog, ErrorBanner, Input, Select } from "@/components/ui";
import { formatDateTime } from "@/lib/format";

const EXPIRY_OPTIONS = [
  { value: "7", label: "7 days" },
  { value: "30", label: "30 days" },
  { value: "90", label: "90 days" },
  { value: "180", label: "180 days" },
  { value: "366", label: "1 year" },
];

/** Names a new API token, its scope and its expiry. */
export function CreateTokenDialog({
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
export function NewTokenDialog({ token, onClose }: { token: NewApiToken | null; onClose: () => void }) {
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
