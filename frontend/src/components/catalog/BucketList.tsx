import { useQuery } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { type Bucket, bucketsQueryOptions } from "@/api/catalog";
import { type SharedBucket, sharedWithMeQueryOptions } from "@/api/sharing";
import { Badge, Button, Card, EmptyState, QueryState } from "@/components/ui";
import { formatBytes, formatCount } from "@/lib/format";
import { NewBucketDialog } from "./NewBucketDialog";
import { rightsText } from "./shared-rights";
import "./browser.css";

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
      <QueryState
        query={buckets}
        loading="Loading buckets…"
        isEmpty={(data) => data.length === 0}
        empty={<EmptyState title="No buckets yet" description="Create one here or with any S3 client." />}
      >
        {(data) => (
          <ul className="browser-bucket-list" aria-label="Buckets">
            {data.map((b) => (
              <BucketEntry key={b.name} name={b.name} current={current} onOpen={onOpen}>
                <span className="browser-bucket__meta muted">
                  {formatCount(b.object_count)} object{b.object_count === 1 ? "" : "s"} ·{" "}
                  {formatBytes(b.used_bytes)} · {b.tier}
                  {b.project ? ` · project ${b.project}` : ""}
                </span>
                {b.space_bytes != null ? <SpaceLine bucket={b} /> : null}
              </BucketEntry>
            ))}
          </ul>
        )}
      </QueryState>
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
