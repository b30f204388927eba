import { type FormEvent, useState } from "react";
import {
  type Access,
  type UserGrant,
  useGrantUser,
  usePublishPrefix,
  useRevokeUser,
  useUnpublishPrefix,
} from "@/api/sharing";
import {
  Badge,
  Button,
  Card,
  type Column,
  ConfirmDialog,
  errorText,
  Input,
  Select,
  Table,
} from "@/components/ui";
import "./sharing.css";

const ACCESS_OPTIONS = [
  { value: "read", label: "Read (download and list)" },
  { value: "read-write", label: "Read-write (also upload and delete)" },
];

/** Grants of the bucket to other users, with the access each has; grant and revoke. */
export function UsersCard({ bucket, users }: { bucket: string; users: UserGrant[] }) {
  const grant = useGrantUser(bucket);
  const revoke = useRevokeUser(bucket);
  const [username, setUsername] = useState("");
  const [access, setAccess] = useState<Access>("read");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    grant.mutate({ username: username.trim(), access }, { onSuccess: () => setUsername("") });
  };
  const columns: Array<Column<UserGrant>> = [
    { id: "user", header: "User", cell: (u) => u.username },
    {
      id: "access",
      header: "Access",
      cell: (u) => <Badge tone={u.access === "read-write" ? "warning" : "info"}>{u.access}</Badge>,
    },
    {
      id: "remove",
      header: "",
      cell: (u) => (
        <Button
          size="sm"
          variant="ghost"
          onClick={() => revoke.mutate(u.username)}
          aria-label={`Remove ${u.username}`}
        >
          Remove
        </Button>
      ),
    },
  ];
  return (
    <Card title="Users" description="Other tierpilot users who may use this bucket with their own S3 keys.">
      {users.length ? (
        <Table
          caption={`Users with access to ${bucket}`}
          columns={columns}
          rows={users}
          rowKey={(u) => String(u.user_id)}
        />
      ) : (
        <p className="muted">Nobody else has access.</p>
      )}
      <form className="sharing-form" onSubmit={submit}>
        <Input label="Username" value={username} onChange={(e) => setUsername(e.target.value)} required />
        <Select
          label="Access"
          value={access}
          options={ACCESS_OPTIONS}
          onChange={(e) => setAccess(e.target.value as Access)}
        />
        <Button type="submit" variant="primary" loading={grant.isPending} disabled={!username.trim()}>
          Grant
        </Button>
      </form>
      {grant.isError ? (
        <p className="ui-field__error" role="alert">
          {errorText(grant.error)}
        </p>
      ) : null}
      {revoke.isError ? (
        <p className="ui-field__error" role="alert">
          {errorText(revoke.error)}
        </p>
      ) : null}
    </Card>
  );
}

/** Prefixes anyone may read without a key; add and remove. */
export function PublicCard({ bucket, prefixes }: { bucket: string; prefixes: string[] }) {
  const publish = usePublishPrefix(bucket);
  const unpublish = useUnpublishPrefix(bucket);
  const [prefix, setPrefix] = useState("");
  const [asking, setAsking] = useState(false);
  const what = prefix ? `every object under “${prefix}”` : `every object in ${bucket}`;
  return (
    <Card
      title="Public prefixes"
      description="Anyone who can reach the gateway may read and list these objects, without credentials."
    >
      {prefixes.length ? (
        <ul className="sharing-list">
          {prefixes.map((p) => (
            <li key={p}>
              <Badge tone="danger">public</Badge> <span className="mono">{p || "(whole bucket)"}</span>{" "}
              <Button size="sm" variant="ghost" onClick={() => unpublish.mutate(p)}>
                Make private
              </Button>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">Nothing is public.</p>
      )}
      <form
        className="sharing-form"
        onSubmit={(e) => {
          e.preventDefault();
          setAsking(true);
        }}
      >
        <Input
          label="Prefix"
          hint="e.g. release/ — empty makes the whole bucket public"
          value={prefix}
          onChange={(e) => setPrefix(e.target.value)}
        />
        <Button type="submit" variant="danger">
          Make public…
        </Button>
      </form>
      <ConfirmDialog
        open={asking}
        title="Make this public?"
        description={`Anyone on the network, with no account and no key, will be able to download and list ${what}. Do not do this for data that is not meant to be published.`}
        confirmLabel="Make public"
        pending={publish.isPending}
        error={publish.error}
        onCancel={() => setAsking(false)}
        onConfirm={() => publish.mutate(prefix, { onSuccess: () => setAsking(false) })}
      />
    </Card>
  );
}
