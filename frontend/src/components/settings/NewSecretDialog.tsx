import type { NewAccessKey } from "@/api/keys";
import { Button, CopyButton, CopyField, Dialog } from "@/components/ui";
import { formatDateTime } from "@/lib/format";
import { endpointSnippets } from "./endpoint-snippets";

/**
 * Shows a freshly issued secret once. The caller drops the secret from memory on close;
 * the server keeps only an encrypted copy and never returns it again.
 */
export function NewSecretDialog({
  secret,
  title,
  onClose,
}: {
  secret: NewAccessKey | null;
  title: string;
  onClose: () => void;
}) {
  return (
    <Dialog
      open={secret !== null}
      onClose={onClose}
      title={title}
      description="Copy the secret access key now. It is shown only this once: tierpilot cannot show it again."
      footer={
        <Button variant="primary" onClick={onClose}>
          I have stored the secret
        </Button>
      }
    >
      {secret ? (
        <div className="new-secret" data-testid="new-secret">
          <CopyField label="Access key ID" value={secret.access_key_id} />
          <CopyField label="Secret access key" value={secret.secret_access_key} secret />
          <CopyField label="S3 gateway endpoint" value={secret.gateway_url} />
          {secret.expires_at ? (
            <p className="muted">
              This key expires at {formatDateTime(secret.expires_at, true)}; the gateway refuses it after
              that.
            </p>
          ) : null}
          {endpointSnippets(secret).map((snippet) => (
            <div className="ui-copyfield" key={snippet.id}>
              <span className="ui-field__label">{snippet.title}</span>
              <pre className="snippet" data-snippet={snippet.id}>
                {snippet.code}
              </pre>
              <div>
                <CopyButton value={snippet.code} label={`Copy the ${snippet.id} snippet`} />
              </div>
            </div>
          ))}
        </div>
      ) : null}
    </Dialog>
  );
}
