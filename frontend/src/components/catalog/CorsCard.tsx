import { type FormEvent, useEffect, useState } from "react";
import { type BucketSettings, type CorsRule, useRemoveCors, useSetCors } from "@/api/catalog";
import { Badge, Button, Card, errorText, Field } from "@/components/ui";
import "./browser.css";

const EXAMPLE: CorsRule[] = [
  {
    origins: ["https://portal.example.org"],
    methods: ["GET", "PUT", "POST"],
    headers: ["*"],
    expose: ["ETag"],
  },
];

/** The origins that may read or upload from a browser, edited as JSON. */
export function CorsCard({ bucket, settings }: { bucket: string; settings: BucketSettings }) {
  const [text, setText] = useState(JSON.stringify(settings.cors ?? EXAMPLE, null, 2));
  const [parseError, setParseError] = useState<string | undefined>();
  useEffect(() => setText(JSON.stringify(settings.cors ?? EXAMPLE, null, 2)), [settings.cors]);
  const save = useSetCors(bucket);
  const remove = useRemoveCors(bucket);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    let rules: unknown;
    try {
      rules = JSON.parse(text);
    } catch {
      setParseError("The rules are not valid JSON.");
      return;
    }
    if (!Array.isArray(rules)) {
      setParseError("The rules are a JSON list of rules.");
      return;
    }
    setParseError(undefined);
    save.mutate(rules as CorsRule[]);
  };
  const error = parseError ?? (save.isError ? errorText(save.error) : undefined);
  return (
    <Card
      title="CORS"
      description="Which web pages (origins) may read or upload with a browser, e.g. a portal's upload form."
      actions={
        settings.cors ? (
          <Button
            size="sm"
            variant="danger"
            loading={remove.isPending}
            onClick={() => remove.mutate(undefined)}
          >
            Remove CORS
          </Button>
        ) : null
      }
    >
      <p>
        {settings.cors ? (
          <Badge tone="success">
            {settings.cors.length} rule{settings.cors.length === 1 ? "" : "s"}
          </Badge>
        ) : (
          <Badge tone="neutral">none</Badge>
        )}{" "}
        Each rule: <code>origins</code> and <code>headers</code> may hold one <code>*</code>;{" "}
        <code>methods</code> of GET, PUT, POST, DELETE, HEAD; <code>expose</code>, <code>max_age</code>{" "}
        (seconds) and <code>id</code> are optional.
      </p>
      <form onSubmit={submit} aria-label="CORS rules" className="stack">
        <Field label="Rules (JSON)" error={error}>
          {(control) => (
            <textarea
              {...control}
              className="ui-input bucket-settings__json mono"
              rows={10}
              spellCheck={false}
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
          )}
        </Field>
        <div>
          <Button type="submit" variant="primary" loading={save.isPending}>
            Save CORS rules
          </Button>
        </div>
      </form>
    </Card>
  );
}
