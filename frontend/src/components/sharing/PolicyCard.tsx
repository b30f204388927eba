import { useState } from "react";
import { type PolicyCheck, useCheckPolicy, useDeletePolicy, useSavePolicy } from "@/api/sharing";
import { Badge, Button, Card, errorText, Field } from "@/components/ui";
import "./sharing.css";

/** The bucket policy as JSON: check it, save it, remove it. */
export function PolicyCard({
  bucket,
  policy,
  words,
  problems,
  isPublic,
}: {
  bucket: string;
  policy: string | null;
  words: string[];
  problems: string[];
  isPublic: boolean;
}) {
  const [text, setText] = useState(policy ?? "");
  const [checked, setChecked] = useState<PolicyCheck | null>(null);
  const check = useCheckPolicy(bucket);
  const save = useSavePolicy(bucket);
  const remove = useDeletePolicy(bucket);
  const runCheck = () => check.mutate(text, { onSuccess: setChecked });
  return (
    <Card
      title="Bucket policy"
      description="The S3 bucket policy (JSON) the gateway evaluates on every request; the entries above are part of it."
      actions={isPublic ? <Badge tone="danger">public</Badge> : null}
    >
      {problems.length ? (
        <div className="sharing-invalid" role="alert">
          <p>
            <Badge tone="danger">invalid</Badge> The stored policy cannot be read in full. Until you replace
            or delete it, what cannot be read denies: other users and anonymous requests are refused wherever
            it could have applied, while you and admins keep access.
          </p>
          <ul className="sharing-list" aria-label="What cannot be read">
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {words.length ? (
        <ul className="sharing-list" aria-label="What the policy allows">
          {words.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      ) : (
        <p className="muted">No policy: only the owner and admins may use the bucket.</p>
      )}
      <Field
        label="Policy (JSON)"
        hint="Checked by the server before it is saved."
        error={checked?.error ?? undefined}
      >
        {(control) => (
          <textarea
            {...control}
            className="ui-input mono"
            rows={10}
            spellCheck={false}
            value={text}
            onChange={(e) => {
              setText(e.target.value);
              setChecked(null);
            }}
          />
        )}
      </Field>
      {checked?.valid ? (
        <section aria-label="What this policy would allow">
          <p>This policy would allow{checked.public ? " — including anonymous access" : ""}:</p>
          <ul className="sharing-list">
            {checked.words.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </section>
      ) : null}
      <div className="sharing-actions">
        <Button onClick={runCheck} loading={check.isPending} disabled={!text.trim()}>
          Check
        </Button>
        <Button
          variant="primary"
          loading={save.isPending}
          disabled={!text.trim()}
          onClick={() => save.mutate(text, { onSuccess: (d) => setText(d.policy ?? "") })}
        >
          Save policy
        </Button>
        {policy ? (
          <Button
            variant="danger"
            loading={remove.isPending}
            onClick={() => remove.mutate(undefined, { onSuccess: () => setText("") })}
          >
            Delete policy
          </Button>
        ) : null}
      </div>
      {save.isError ? (
        <p className="ui-field__error" role="alert">
          {errorText(save.error)}
        </p>
      ) : null}
      {check.isError ? (
        <p className="ui-field__error" role="alert">
          {errorText(check.error)}
        </p>
      ) : null}
    </Card>
  );
}
