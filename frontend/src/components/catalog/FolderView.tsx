import { useState } from "react";
import { downloadUrl, useDeleteObjects } from "@/api/catalog";
import type { Selection } from "@/api/restores";
import { RestoreDialog } from "@/components/restores/RestoreDialog";
import { Badge, Button, Card, ConfirmDialog, EmptyState, Input, QueryState, Table } from "@/components/ui";
import { formatCount } from "@/lib/format";
import { FolderActions, SelectionBar } from "./FolderActions";
import { FolderCrumbs } from "./FolderCrumbs";
import { UploadList, useUploads } from "./FolderUploads";
import { folderColumns } from "./folder-columns";
import { useFolderListing } from "./folder-listing";
import { folderRowKey, objectRowKey, useFolderSelection } from "./folder-selection";
import { NewFolderDialog } from "./NewFolderDialog";
import { rightsText, type SharedRights } from "./shared-rights";
import "./browser.css";

/** One folder of a bucket: sub-folders and objects with selection, upload, download, delete, restore
 * (of a bucket shared with the viewer, what the sharing grants). */
export function FolderView({
  bucket,
  prefix,
  shared,
  openFolder,
  openObject,
  onRestoreCreated,
  onBucketDeleted,
}: {
  bucket: string;
  prefix: string;
  shared?: SharedRights;
  openFolder: (prefix: string) => void;
  openObject: (key: string) => void;
  onRestoreCreated: (batchId: number) => void;
  onBucketDeleted: () => void;
}) {
  const mayWrite = !shared || shared.write;
  const mayDelete = !shared || shared.delete;
  const [filter, setFilter] = useState("");
  const { folder, objects, rows, startsWith, loadMore } = useFolderListing(bucket, prefix, filter);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [restoring, setRestoring] = useState<Selection | null>(null);
  const { uploads, fileInput, startUploads } = useUploads(bucket, prefix);
  const remove = useDeleteObjects();
  const [creatingFolder, setCreatingFolder] = useState(false);
  const { selection, selectedKeys, selectedFolders, clearSelection, archivedSelected, oneReadable } =
    useFolderSelection(objects);
  const columns = folderColumns({ prefix, openFolder, openObject });
  const under = prefix + startsWith;

  return (
    <Card
      title={<FolderCrumbs bucket={bucket} prefix={prefix} openFolder={openFolder} />}
      className="browser-folder"
      actions={
        <FolderActions
          bucket={bucket}
          mayWrite={mayWrite}
          mayDeleteBucket={prefix === "" && !shared}
          onFiles={startUploads}
          fileInput={fileInput}
          onNewFolder={() => setCreatingFolder(true)}
          onBucketDeleted={onBucketDeleted}
        />
      }
    >
      <div className="stack">
        {shared ? (
          <p className="browser-shared-note">
            <Badge tone="info">shared</Badge> Shared with you by <strong>{shared.owner}</strong>:{" "}
            {rightsText(shared)}
          </p>
        ) : null}
        <UploadList uploads={uploads} />
        <div className="browser-tools">
          <div className="browser-filter">
            <Input
              label="Filter this folder"
              type="search"
              value={filter}
              placeholder="start of a name"
              onChange={(e) => setFilter(e.target.value)}
            />
          </div>
          {shared ? null : (
            <Button size="sm" onClick={() => setRestoring({ bucket, keys: [], prefixes: [under] })}>
              {under ? `Restore everything under ${under}…` : "Restore the whole bucket…"}
            </Button>
          )}
          <SelectionBar
            count={selectedKeys.size + selectedFolders.size}
            download={oneReadable ? downloadUrl(bucket, oneReadable.key) : null}
            onRestore={
              shared
                ? null
                : archivedSelected
                  ? () => setRestoring({ bucket, keys: [...selectedKeys], prefixes: [...selectedFolders] })
                  : undefined
            }
            onDelete={mayDelete ? (selectedKeys.size ? () => setConfirmDelete(true) : undefined) : null}
          />
        </div>
        <QueryState query={folder} loading="Loading the folder…">
          {() => (
            <Table
              caption={`Contents of ${bucket}/${prefix}`}
              columns={columns}
              rows={rows}
              rowKey={(row) =>
                row.kind === "folder" ? folderRowKey(row.prefix) : objectRowKey(row.object.key)
              }
              rowLabel={(row) => (row.kind === "folder" ? `folder ${row.prefix}` : row.object.key)}
              selection={selection}
              virtual={{ rowHeight: 34, onNearEnd: loadMore }}
              empty={
                startsWith ? (
                  <EmptyState
                    title="Nothing matches"
                    description={`No name here starts with “${startsWith}”.`}
                  />
                ) : (
                  <EmptyState
                    title="This folder is empty"
                    description="Upload files here, or write them with any S3 client."
                  />
                )
              }
            />
          )}
        </QueryState>
        <p className="muted browser-count" aria-live="polite">
          {formatCount(rows.length)} {rows.length === 1 ? "entry" : "entries"}
          {folder.hasNextPage ? " loaded; more load as you scroll" : ""}
          {folder.isFetchingNextPage ? " (loading…)" : ""}
        </p>
      </div>
      <ConfirmDialog
        open={confirmDelete}
        title={`Delete ${formatCount(selectedKeys.size)} object${selectedKeys.size === 1 ? "" : "s"}?`}
        description="The objects and their bytes on every tier are removed. This cannot be undone."
        confirmLabel="Delete"
        pending={remove.isPending}
        error={remove.error}
        onCancel={() => setConfirmDelete(false)}
        onConfirm={() =>
          remove.mutate(
            { bucket, keys: [...selectedKeys] },
            {
              onSuccess: () => {
                setConfirmDelete(false);
                clearSelection();
              },
            },
          )
        }
      />
      <NewFolderDialog
        bucket={bucket}
        prefix={prefix}
        open={creatingFolder}
        onClose={() => setCreatingFolder(false)}
        onCreated={(created) => {
          setCreatingFolder(false);
          openFolder(created);
        }}
      />
      {restoring ? (
        <RestoreDialog
          open
          selection={restoring}
          onClose={() => setRestoring(null)}
          onCreated={(batch) => {
            clearSelection();
            onRestoreCreated(batch.id);
          }}
        />
      ) : null}
    </Card>
  );
}
