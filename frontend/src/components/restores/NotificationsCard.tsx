import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import {
  notificationsQueryOptions,
  useMarkRead,
  useRotateWebhookSecret,
  useSetWebhook,
  webhookQueryOptions,
} from "@/api/notifications";
import { Badge, Button, Card, ConfirmDialog, CopyField, Dialog, ErrorBanner, Input } from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import "./restores.css";

/** Unread notices of finished restore batches, and where a webhook should be told about them. */
export function NotificationsCard() {
  const unread = useQuery(notificationsQueryOptions(true));
  const markRead = useMarkRead();
  const items = unread.data?.items ?? [];
  return (
    <Card
      title="Notifications"
      description="Finished restore batches; a webhook gets the same notice as a signed JSON POST."
      actions={
        items.length ? (
          <Button size="sm" loading={markRead.isPending} onClick={() => markRead.mutate(null)}>
            Mark all read
          </Button>
        ) : null
      }
    >
      <div className="stack">
        {unread.error ? <ErrorBanner error={unread.error} title="Notifications could not be loaded" /> : null}
        {items.length ? (
          <ul className="restore-notes">
            {items.map((n) => (
              <li key={n.id} className="restore-note">
                <Badge tone={n.kind === "restore.ready" ? "success" : "danger"}>
                  {n.kind === "restore.ready" ? "ready" : "failed"}
                </Badge>
                <div>
                  {n.link?.startsWith("/restores?batch=") ? (
                    <Link to="/restores" search={{ batch: Number(n.link.split("=")[1]) }}>
                      {n.title}
                    </Link>
                  ) : (
                    <strong>{n.title}</strong>
                  )}
                  <p className="muted">
                    {n.body} {formatDateTime(n.created_at)}
                    {n.webhook_state === "failed" ? " · webhook gave up" : ""}
                  </p>
                </div>
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">No unread notifications.</p>
        )}
        <WebhookForm />
      </div>
    </Card>
  );
}

function WebhookForm() {
  const current = useQuery(webhookQueryOptions());
  const save = useSetWebhook();
  const rotate = useRotateWebhookSecret();
  const [draft, setDraft] = useState<string | null>(null);
  const [confirmRotate, setConfirmRotate] = useState(false);
  const [revealed, setRevealed] = useState<{ secret: string; title: string } | null>(null);
  const value = draft ?? current.data?.url ?? "";

  const closeSecret = () => {
    // Drop every copy of the secret held by the page: dialog state and the mutations' results.
    setRevealed(null);
    save.reset();
    rotate.reset();
  };

  return (
    <>
      <form
        className="row restore-webhook"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(value, {
            onSuccess: (hook) => {
              setDraft(null);
              if (hook.secret) setRevealed({ secret: hook.secret, title: "Webhook signing secret" });
            },
          });
        }}
      >
        <Input
          label="Webhook URL"
          type="url"
          placeholder="https://example.org/hooks/restores"
          value={value}
          onChange={(e) => setDraft(e.target.value)}
          error={save.error ? save.error.message : undefined}
          hint="Empty: no webhook. Failed deliveries are retried with growing pauses. Each POST is signed (X-Tierpilot-Signature); docs/webhooks.md shows how to check it."
        />
        <Button type="submit" loading={save.isPending} disabled={draft === null}>
          Save
        </Button>
        {current.data?.has_secret ? (
          <Button type="button" onClick={() => setConfirmRotate(true)}>
            Rotate secret
          </Button>
        ) : null}
      </form>
      <ConfirmDialog
        open={confirmRotate}
        title="Rotate the signing secret?"
        description="Deliveries are signed with the new secret from now on, retries included; a receiver still checking the old one will refuse them."
        confirmLabel="Rotate secret"
        pending={rotate.isPending}
        error={rotate.error}
        onCancel={() => setConfirmRotate(false)}
        onConfirm={() =>
          rotate.mutate(undefined, {
            onSuccess: (hook) => {
              setConfirmRotate(false);
              if (hook.secret) setRevealed({ secret: hook.secret, title: "Signing secret rotated" });
            },
          })
        }
      />
      <Dialog
        open={revealed !== null}
        onClose={closeSecret}
        title={revealed?.title ?? ""}
        description="Copy the signing secret into your receiver now. It is shown only this once: tierpilot cannot show it again."
        footer={
          <Button variant="primary" onClick={closeSecret}>
            I have stored the secret
          </Button>
        }
      >
        {revealed ? <CopyField label="Signing secret" value={revealed.secret} secret /> : null}
      </Dialog>
    </>
  );
}
