import { type FormEvent, useState } from "react";
import { type BucketSettings, useSetDefaultRetention } from "@/api/catalog";
import { Badge, Button, Card, errorText, Input, Select } from "@/components/ui";
import "./browser.css";

type RetentionMode = "" | "GOVERNANCE" | "COMPLIANCE";

/** Object lock, chosen at creation, and the default retention of new versions. */
export function ObjectLockCard({ bucket, settings }: { bucket: string; settings: BucketSettings }) {
  const [mode, setMode] = useState<RetentionMode>((settings.default_retention_mode as RetentionMode) ?? "");
  const [amount, setAmount] = useState(
    String(settings.default_retention_days ?? settings.default_retention_years ?? ""),
  );
  const [unit, setUnit] = useState<"days" | "years">(settings.default_retention_years ? "years" : "days");
  const save = useSetDefaultRetention(bucket);
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
