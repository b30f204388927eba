import { Link, useNavigate } from "@tanstack/react-router";
import { PageHeader } from "@/components/ui";
import { BucketList, useSharedBuckets } from "./BucketList";
import { FolderView } from "./FolderView";
import { ObjectDetailCard } from "./ObjectDetailCard";
import "./browser.css";

export interface BrowserSearch {
  bucket?: string;
  prefix?: string;
  key?: string;
}

/** The Browser page: buckets, a folder of the chosen bucket, and the chosen object's details in a dialog
 * over the folder (the listing is not pushed down). */
export function BrowserPage({
  bucket,
  prefix = "",
  objectKey,
}: {
  bucket?: string;
  prefix?: string;
  objectKey?: string;
}) {
  const navigate = useNavigate({ from: "/browser" });
  const go = (search: BrowserSearch) => navigate({ search });
  const sharedBucket = useSharedBuckets().find((b) => b.bucket === bucket);
  const shared = sharedBucket
    ? { owner: sharedBucket.owner, write: sharedBucket.may_write, delete: sharedBucket.may_delete }
    : undefined;
  return (
    <>
      <PageHeader
        title="Browser"
        description="Buckets, folders and objects in the catalog, on every tier: upload, download, restore."
        actions={
          bucket && !shared ? (
            <Link
              to="/bucket-settings"
              search={{ bucket }}
              className="ui-button ui-button--secondary ui-button--md"
            >
              Bucket settings
            </Link>
          ) : null
        }
      />
      <div className="browser-layout">
        <BucketList current={bucket} onOpen={(name) => go({ bucket: name })} />
        <div className="stack-lg browser-main">
          {bucket && objectKey ? (
            <ObjectDetailCard
              bucket={bucket}
              objectKey={objectKey}
              onClose={() => go({ bucket, prefix: prefix || undefined })}
            />
          ) : null}
          {bucket ? (
            <FolderView
              key={`${bucket}/${prefix}`}
              bucket={bucket}
              prefix={prefix}
              shared={shared}
              openFolder={(p) => go({ bucket, prefix: p || undefined })}
              openObject={(key) => go({ bucket, prefix: prefix || undefined, key })}
              onRestoreCreated={(id) => navigate({ to: "/restores", search: { batch: id } })}
              onBucketDeleted={() => go({})}
            />
          ) : (
            <p className="muted">Choose a bucket to see its folders and objects.</p>
          )}
        </div>
      </div>
    </>
  );
}
