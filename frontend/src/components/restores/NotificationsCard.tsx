import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import {
  notificationsQueryOptions,
  useMarkRead,
  useSetWebhook,
  webhookQueryOptions,
} from "@/api/notifications";
import { Badge, Button, Card, ErrorBanner, Input } from "@/components/ui";
import { formatDateTime } from "@/lib/format";

/** Unread notices of finished restore batches, and where a webhook should be told about them. */
export function NotificationsCard() {
  const unread = useQuery(notificationsQueryOptions(true));
  const markRead = useMarkRead();
  const items = unread.data?.items ?? [];
  return (
    <Card
      title="Notifications"
      description="Finished restore batches; a webhook gets the same notice as a JSON POST."
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
  const [draft, setDraft] = useState<string | null>(null);
  const value = draft ?? current.data?.url ?? "";
  return (
    <form
      className="row restore-webhook"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate(value, { onSuccess: () => setDraft(null) });
      }}
    >
      <Input
        label="Webhook URL"
        type="url"
        placeholder="https://example.org/hooks/restores"
        value={value}
        onChange={(e) => setDraft(e.target.value)}
        error={save.error ? save.error.message : undefined}
        hint="Empty: no webhook. Failed deliveries are retried with growing pauses."
      />
      <Button type="submit" loading={save.isPending} disabled={draft === null}>
        Save
      </Button>
    </form>
  );
}
