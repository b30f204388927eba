import { useQuery } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { type Bucket, bucketsQueryOptions, useCreateBucket } from "@/api/catalog";
import { type SharedBucket, sharedWithMeQueryOptions } from "@/api/sharing";
import { tiersQueryOptions } from "@/api/tiers";
import {
  Badge,
  Button,
  Card,
  Dialog,
  EmptyState,
  ErrorBanner,
  Input,
  LoadingState,
  Select,
} from "@/components/ui";
import { formatBytes, formatCount } from "@/lib/format";
import { rightsText } from "./FolderView";

/** The buckets the user may browse (own; admins all), with object count and stored bytes, then the buckets
 * other users share with them (the owner's name and what the sharing grants). */
export function BucketList({
  current,
  onOpen,
}: {
  current: string | undefined;
  onOpen: (bucket: string) => void;
}) {
  const buckets = useQuery(bucketsQueryOptions());
  const shared = useSharedBuckets();
  const [creating, setCreating] = useState(false);
  return (
    <Card
      title="Buckets"
      className="browser-buckets"
      actions={
        <Button size="sm" onClick={() => setCreating(true)}>
          New bucket
        </Button>
      }
    >
      {buckets.isPending ? <LoadingState label="Loading buckets…" /> : null}
      {buckets.isError ? <ErrorBanner error={buckets.error} onRetry={() => buckets.refetch()} /> : null}
      {buckets.data && buckets.data.length === 0 ? (
        <EmptyState title="No buckets yet" description="Create one here or with any S3 client." />
      ) : null}
      {buckets.data?.length ? (
        <ul className="browser-bucket-list" aria-label="Buckets">
          {buckets.data.map((b) => (
            <BucketEntry key={b.name} name={b.name} current={current} onOpen={onOpen}>
              <span className="browser-bucket__meta muted">
                {formatCount(b.object_count)} object{b.object_count === 1 ? "" : "s"} ·{" "}
                {formatBytes(b.used_bytes)} · {b.tier}
              </span>
              {b.space_bytes != null ? <SpaceLine bucket={b} /> : null}
            </BucketEntry>
          ))}
        </ul>
      ) : null}
      {shared.length ? (
        <>
          <h3 className="browser-bucket-group">Shared with you</h3>
          <ul className="browser-bucket-list" aria-label="Shared with you">
            {shared.map((b) => (
              <BucketEntry key={b.bucket} name={b.bucket} current={current} onOpen={onOpen}>
                <span className="browser-bucket__meta muted">
                  <Badge tone="info">shared</Badge> by {b.owner} ·{" "}
                  {rightsText({ write: b.may_write, delete: b.may_delete })}
                </span>
              </BucketEntry>
            ))}
          </ul>
        </>
      ) : null}
      <NewBucketDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(name) => {
          setCreating(false);
          onOpen(name);
        }}
      />
    </Card>
  );
}

function BucketEntry({
  name,
  current,
  onOpen,
  children,
}: {
  name: string;
  current: string | undefined;
  onOpen: (bucket: string) => void;
  children: ReactNode;
}) {
  return (
    <li>
      <button
        type="button"
        className="browser-bucket"
        aria-current={name === current ? "true" : undefined}
        onClick={() => onOpen(name)}
      >
        <span className="browser-bucket__name">{name}</span>
        {children}
      </button>
    </li>
  );
}

/** Buckets other users share with the viewer that are not in their own list (an admin's list has them all),
 * that the sharing lets them list. */
export function useSharedBuckets(): SharedBucket[] {
  const buckets = useQuery(bucketsQueryOptions());
  const withMe = useQuery(sharedWithMeQueryOptions());
  const own = new Set((buckets.data ?? []).map((b) => b.name));
  return (withMe.data ?? []).filter((b) => b.may_list && !own.has(b.bucket));
}

function SpaceLine({ bucket }: { bucket: Bucket }) {
  const share = bucket.space_bytes ? bucket.used_bytes / bucket.space_bytes : 0;
  return (
    <span className="browser-bucket__meta muted">
      space reservation {formatBytes(bucket.space_bytes)} ({Math.round(share * 100)} % used)
    </span>
  );
}

const GIB = 1024 ** 3;

function NewBucketDialog({
  open,
  onClose,
  onCreated,
}: {
  open: boolean;
  onClose: () => void;
  onCreated: (name: string) => void;
}) {
  const tiers = useQuery({ ...tiersQueryOptions(), enabled: open });
  const create = useCreateBucket();
  const [name, setName] = useState("");
  const [tier, setTier] = useState("");
  const [spaceGib, setSpaceGib] = useState("");
  const nameError =
    name && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name)
      ? "3–63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit"
      : undefined;
  const space = spaceGib.trim() === "" ? null : Number(spaceGib);
  const spaceError =
    space != null && !(Number.isFinite(space) && space > 0) ? "a positive number of GiB" : undefined;
  const submit = () =>
    create.mutate(
      { name, tier: tier || null, space_bytes: space == null ? null : Math.round(space * GIB) },
      {
        onSuccess: (bucket) => {
          setName("");
          setSpaceGib("");
          onCreated(bucket.name);
        },
      },
    );
  return (
    <Dialog
      open={open}
      onClose={onClose}
      title="New bucket"
      description="A bucket lives on one tier; objects may go to other tiers by storage class."
      footer={
        <>
          <Button onClick={onClose}>Cancel</Button>
          <Button
            variant="primary"
            loading={create.isPending}
            disabled={!name || !!nameError || !!spaceError}
            onClick={submit}
          >
            Create bucket
          </Button>
        </>
      }
    >
      <div className="stack">
        <Input
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value.trim())}
          error={nameError}
          data-autofocus
          autoComplete="off"
        />
        <Select
          label="Tier"
          value={tier}
          onChange={(e) => setTier(e.target.value)}
          options={[
            { value: "", label: "Default tier" },
            ...(tiers.data ?? []).map((t) => ({
              value: t.name,
              label: `${t.name} (${t.storage_classes.join(", ")})`,
            })),
          ]}
        />
        <Input
          label="Space reservation (GiB, optional)"
          hint="Writes beyond it are refused while the reservation is open."
          inputMode="decimal"
          value={spaceGib}
          onChange={(e) => setSpaceGib(e.target.value)}
          error={spaceError}
        />
        {create.isError ? <ErrorBanner title="Could not create the bucket" error={create.error} /> : null}
      </div>
    </Dialog>
  );
}
