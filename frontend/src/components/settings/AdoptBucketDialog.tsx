import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ApiError } from "@/api/client";
import { type Adoption, adoptionQueryOptions, type Tier, useStartAdoption } from "@/api/tiers";
import { Badge, type BadgeTone, Button, Dialog, ErrorBanner, Input } from "@/components/ui";
import { formatCount } from "@/lib/format";

type FieldName = "bucket" | "into" | "owner";
const FIELDS: FieldName[] = ["bucket", "into", "owner"];

/** Which form field a refusal names: the domain error's `field`, or the `field: message` of a validation error. */
export function refusedField(error: unknown): { field: FieldName | null; message: string } | null {
  if (!(error instanceof ApiError) || error.status !== 422) return null;
  const body = error.body as { field?: unknown } | null;
  const named = typeof body?.field === "string" ? body.field : error.message.split(":")[0]?.trim();
  const field = FIELDS.find((f) => f === named) ?? null;
  const message =
    field && error.message.startsWith(`${field}:`)
      ? error.message.slice(field.length + 1).trim()
      : error.message;
  return { field, message };
}

const STATE_TONE: Record<string, BadgeTone> = {
  queued: "info",
  running: "info",
  done: "success",
  failed: "danger",
};

function AdoptionProgress({ tierId, job }: { tierId: number; job: Adoption }) {
  const progress = useQuery({ ...adoptionQueryOptions(tierId, job.id), initialData: job });
  const p = progress.data;
  return (
    <div className="stack" role="status" aria-label="Adoption progress">
      <p>
        <Badge tone={STATE_TONE[p.state] ?? "neutral"}>{p.state}</Badge>{" "}
        <span className="mono">{p.remote_bucket}</span> → bucket <strong>{p.bucket}</strong>
      </p>
      <p>
        {formatCount(p.listed)} objects listed, {formatCount(p.added)} added
        {p.removed ? `, ${formatCount(p.removed)} removed` : ""}
      </p>
      {p.error ? <ErrorBanner title="The scan failed" error={p.error} /> : null}
      {progress.isError ? <ErrorBanner title="Could not read the progress" error={progress.error} /> : null}
    </div>
  );
}

/** Admins: adopt a bucket (Azure: container) that already lives on a remote tier's endpoint, without copying. */
export function AdoptBucketDialog({ tier, onClose }: { tier: Tier | null; onClose: () => void }) {
  const start = useStartAdoption();
  const [bucket, setBucket] = useState("");
  const [into, setInto] = useState("");
  const [owner, setOwner] = useState("");

  const close = () => {
    setBucket("");
    setInto("");
    setOwner("");
    start.reset();
    onClose();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!tier || !bucket.trim()) return;
    start.mutate({
      tierId: tier.id,
      body: { bucket: bucket.trim(), into: into.trim() || null, owner: owner.trim() || null },
    });
  };
  const refused = refusedField(start.error);
  const fieldError = (f: FieldName) => (refused?.field === f ? refused.message : undefined);
  const job = start.data;
  return (
    <Dialog
      open={tier !== null}
      onClose={close}
      title={`Adopt a bucket on ${tier?.name ?? ""}`}
      description="Its objects are listed into a local bucket where they are; no byte is copied. The bucket is scanned again periodically: new keys are added, deleted keys removed."
      footer={
        job ? (
          <Button variant="primary" onClick={close}>
            Close
          </Button>
        ) : (
          <>
            <Button variant="ghost" onClick={close}>
              Cancel
            </Button>
            <Button
              variant="primary"
              type="submit"
              form="adopt-bucket-form"
              disabled={start.isPending || !bucket.trim()}
            >
              {start.isPending ? "Queuing…" : "Adopt"}
            </Button>
          </>
        )
      }
    >
      {tier && job ? (
        <AdoptionProgress tierId={tier.id} job={job} />
      ) : (
        <form id="adopt-bucket-form" className="stack" onSubmit={submit} noValidate aria-label="Adopt bucket">
          {start.isError && !refused?.field ? <ErrorBanner title="Not adopted" error={start.error} /> : null}
          <Input
            label={tier?.driver === "azure" ? "Remote container" : "Remote bucket"}
            value={bucket}
            required
            error={fieldError("bucket")}
            onChange={(e) => setBucket(e.target.value)}
          />
          <Input
            label="Local bucket"
            hint="Default: the remote bucket's name. Created on this tier when missing."
            value={into}
            error={fieldError("into")}
            onChange={(e) => setInto(e.target.value)}
          />
          <Input
            label="Owner"
            hint="Username owning a new local bucket. Default: you."
            value={owner}
            error={fieldError("owner")}
            onChange={(e) => setOwner(e.target.value)}
          />
        </form>
      )}
    </Dialog>
  );
}
