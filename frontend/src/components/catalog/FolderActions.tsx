import type { RefObject } from "react";
import { useState } from "react";
import { useDeleteBucket } from "@/api/catalog";
import { Button, ConfirmDialog } from "@/components/ui";
import { formatCount } from "@/lib/format";
import "./browser.css";

/** The folder card's buttons: upload, new folder and, at a bucket's top, deleting the (empty) bucket. */
export function FolderActions({
  bucket,
  mayWrite,
  mayDeleteBucket,
  fileInput,
  onFiles,
  onNewFolder,
  onBucketDeleted,
}: {
  bucket: string;
  mayWrite: boolean;
  mayDeleteBucket: boolean;
  fileInput: RefObject<HTMLInputElement | null>;
  onFiles: (files: FileList | null) => void;
  onNewFolder: () => void;
  onBucketDeleted: () => void;
}) {
  const removeBucket = useDeleteBucket();
  const [confirming, setConfirming] = useState(false);
  return (
    <div className="row">
      <input
        ref={fileInput}
        type="file"
        multiple
        className="visually-hidden"
        aria-label="Files to upload"
        onChange={(e) => onFiles(e.target.files)}
      />
      {mayWrite ? (
        <>
          <Button size="sm" variant="primary" onClick={() => fileInput.current?.click()}>
            Upload files
          </Button>
          <Button size="sm" onClick={onNewFolder}>
            New folder
          </Button>
        </>
      ) : null}
      {mayDeleteBucket ? (
        <Button size="sm" variant="ghost" className="button-danger-text" onClick={() => setConfirming(true)}>
          Delete bucket
        </Button>
      ) : null}
      <ConfirmDialog
        open={confirming}
        title={`Delete the bucket ${bucket}?`}
        description="Only an empty bucket can be deleted: delete its objects first. Unfinished uploads go with it."
        confirmLabel="Delete bucket"
        pending={removeBucket.isPending}
        error={removeBucket.error}
        onCancel={() => {
          setConfirming(false);
          removeBucket.reset();
        }}
        onConfirm={() => removeBucket.mutate(bucket, { onSuccess: onBucketDeleted })}
      />
    </div>
  );
}

/**
 * What is selected and what can be done with it. An action given as null is not offered (not granted, or
 * not possible on a shared bucket); one left undefined is offered but disabled for this selection.
 */
export function SelectionBar({
  count,
  download,
  onRestore,
  onDelete,
}: {
  count: number;
  /** The download link of the one readable object selected. */
  download: string | null;
  onRestore: (() => void) | null | undefined;
  onDelete: (() => void) | null | undefined;
}) {
  return (
    <div className="row browser-selection" aria-live="polite">
      <span className="muted">{count ? `${formatCount(count)} selected` : "Nothing selected"}</span>
      {download ? (
        <a className="ui-button ui-button--secondary ui-button--sm" href={download} download>
          Download
        </a>
      ) : null}
      {onRestore === null ? null : (
        <Button size="sm" disabled={!onRestore} onClick={onRestore}>
          Restore…
        </Button>
      )}
      {onDelete === null ? null : (
        <Button size="sm" variant="danger" disabled={!onDelete} onClick={onDelete}>
          Delete
        </Button>
      )}
    </div>
  );
}
