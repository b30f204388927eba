import { queryOptions, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { type FormEvent, useEffect, useState } from "react";
import { bucketsQueryOptions } from "@/api/catalog";
import { api, type Schemas, unwrap } from "@/api/client";
import {
  Badge,
  Button,
  Card,
  ErrorBanner,
  errorText,
  Field,
  Input,
  LoadingState,
  PageHeader,
  Select,
} from "@/components/ui";
import "./browser.css";

export type BucketSettings = Schemas["BucketSettings"];
export type CorsRule = Schemas["CorsRuleIn"];
type RetentionMode = "" | "GOVERNANCE" | "COMPLIANCE";

export const settingsQueryOptions = (bucket: string) =>
  queryOptions({
    queryKey: ["catalog", "settings", bucket] as const,
    queryFn: () => unwrap(api.GET("/api/buckets/{name}/settings", { params: { path: { name: bucket } } })),
  });

function useSettingsMutation<T>(bucket: string, run: (value: T) => Promise<BucketSettings>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: run,
    onSuccess: (data) => queryClient.setQueryData(settingsQueryOptions(bucket).queryKey, data),
  });
}

/** A bucket's settings: versioning, object lock and its default retention, CORS rules, and the links to its
 * lifecycle rules and sharing. */
export function BucketSettingsPage({
  bucket,
  onBucket,
}: {
  bucket: string;
  onBucket: (bucket: string) => void;
}) {
  const buckets = useQuery(bucketsQueryOptions());
  const settings = useQuery({ ...settingsQueryOptions(bucket), enabled: bucket !== "" });
  const options = (buckets.data ?? []).map((b) => ({ value: b.name, label: b.name }));
  return (
    <>
      <PageHeader
        title="Bucket settings"
        description="Versioning, object lock, CORS for browser uploads, lifecycle and sharing of one bucket."
        actions={
          bucket ? (
            <Link to="/browser" search={{ bucket }} className="ui-button ui-button--secondary ui-button--md">
              Open in the Browser
            </Link>
          ) : null
        }
      />
      <div className="stack-lg">
        <Select
          label="Bucket"
          value={bucket}
          onChange={(e) => onBucket(e.target.value)}
          options={[{ value: "", label: "Choose a bucket…" }, ...options]}
        />
        {buckets.isError ? <ErrorBanner error={buckets.error} onRetry={() => buckets.refetch()} /> : null}
        {bucket && settings.isPending ? <LoadingState label="Loading the bucket's settings…" /> : null}
        {settings.isError ? <ErrorBanner error={settings.error} onRetry={() => settings.refetch()} /> : null}
        {bucket && settings.data ? (
          <div className="bucket-settings" key={bucket}>
            <VersioningCard bucket={bucket} settings={settings.data} />
            <LockCard bucket={bucket} settings={settings.data} />
            <CorsCard bucket={bucket} settings={settings.data} />
            <Card title="Lifecycle" description="Rules that move objects down the tiers or expire them.">
              <Link to="/lifecycle" search={{ bucket }}>
                Lifecycle rules of {bucket}
              </Link>
            </Card>
            <Card title="Sharing" description="Grants to other users, public prefixes and the bucket policy.">
              <Link to="/sharing" search={{ bucket }}>
                Sharing of {bucket}
              </Link>
            </Card>
          </div>
        ) : null}
      </div>
    </>
  );
}

function VersioningCard({ bucket, settings }: { bucket: string; settings: BucketSettings }) {
  const save = useSettingsMutation(bucket, (status: "Enabled" | "Suspended") =>
    unwrap(
      api.PUT("/api/buckets/{name}/versioning", { params: { path: { name: bucket } }, body: { status } }),
    ),
  );
  const state = settings.versioning ?? "Off";
  return (
    <Card
      title="Versioning"
      description="Every write keeps the version it replaces; deletes leave a delete marker."
      actions={
        state === "Enabled" ? (
          <Button
            size="sm"
            loading={save.isPending}
            disabled={settings.object_lock}
            onClick={() => save.mutate("Suspended")}
          >
            Suspend
          </Button>
        ) : (
          <Button size="sm" variant="primary" loading={save.isPending} onClick={() => save.mutate("Enabled")}>
            Enable
          </Button>
        )
      }
    >
      <p>
        Versioning is{" "}
        <Badge tone={state === "Enabled" ? "success" : state === "Suspended" ? "warning" : "neutral"}>
          {state.toLowerCase()}
        </Badge>
        {settings.object_lock ? " — object lock keeps it enabled." : null}
      </p>
      {save.isError ? <p className="ui-field__error">{errorText(save.error)}</p> : null}
    </Card>
  );
}

function LockCard({ bucket, settings }: { bucket: string; settings: BucketSettings }) {
  const [mode, setMode] = useState<RetentionMode>((settings.default_retention_mode as RetentionMode) ?? "");
  const [amount, setAmount] = useState(
    String(settings.default_retention_days ?? settings.default_retention_years ?? ""),
  );
  const [unit, setUnit] = useState<"days" | "years">(settings.default_retention_years ? "years" : "days");
  const save = useSettingsMutation(bucket, (body: Schemas["LockUpdate"]) =>
    unwrap(api.PUT("/api/buckets/{name}/lock", { params: { path: { name: bucket } }, body })),
  );
  if (!settings.object_lock) {
    return (
      <Card
        title="Object lock"
        description="Write once, read many: versions that cannot be deleted or changed."
      >
        <p>
          <Badge tone="neutral">off</Badge> Object lock is chosen when a bucket is created (S3's{" "}
          <code>x-amz-bucket-object-lock-enabled: true</code>) and cannot be turned on later.
        </p>
      </Card>
    );
  }
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const n = Number.parseInt(amount, 10);
    save.mutate(
      mode === ""
        ? { mode: null }
        : { mode, days: unit === "days" ? n : null, years: unit === "years" ? n : null },
    );
  };
  const fieldError = save.isError ? errorText(save.error) : undefined;
  return (
    <Card
      title="Object lock"
      description="New versions get the default retention unless a write names its own; COMPLIANCE is never shortened."
    >
      <p>
        <Badge tone="success">on</Badge> Versions under retention or a legal hold cannot be deleted, also not
        by lifecycle rules or administrators.
      </p>
      <form className="bucket-settings__row" onSubmit={submit} aria-label="Default retention">
        <Select
          label="Default retention"
          value={mode}
          onChange={(e) => setMode(e.target.value as RetentionMode)}
          options={[
            { value: "", label: "None" },
            { value: "GOVERNANCE", label: "Governance (bypass allowed)" },
            { value: "COMPLIANCE", label: "Compliance (nobody shortens it)" },
          ]}
        />
        <Input
          label="Period"
          type="number"
          min={1}
          value={amount}
          disabled={mode === ""}
          onChange={(e) => setAmount(e.target.value)}
          error={fieldError}
        />
        <Select
          label="Unit"
          value={unit}
          disabled={mode === ""}
          onChange={(e) => setUnit(e.target.value as "days" | "years")}
          options={[
            { value: "days", label: "days" },
            { value: "years", label: "years" },
          ]}
        />
        <Button type="submit" variant="primary" loading={save.isPending}>
          Save retention
        </Button>
      </form>
    </Card>
  );
}

const EXAMPLE: CorsRule[] = [
  {
    origins: ["https://portal.example.org"],
    methods: ["GET", "PUT", "POST"],
    headers: ["*"],
    expose: ["ETag"],
  },
];

function CorsCard({ bucket, settings }: { bucket: string; settings: BucketSettings }) {
  const [text, setText] = useState(JSON.stringify(settings.cors ?? EXAMPLE, null, 2));
  const [parseError, setParseError] = useState<string | undefined>();
  useEffect(() => setText(JSON.stringify(settings.cors ?? EXAMPLE, null, 2)), [settings.cors]);
  const save = useSettingsMutation(bucket, (rules: CorsRule[]) =>
    unwrap(api.PUT("/api/buckets/{name}/cors", { params: { path: { name: bucket } }, body: { rules } })),
  );
  const remove = useSettingsMutation(bucket, () =>
    unwrap(api.DELETE("/api/buckets/{name}/cors", { params: { path: { name: bucket } } })),
  );
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
