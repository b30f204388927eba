import { useInfiniteQuery } from "@tanstack/react-query";
import { useState } from "react";
import { downloadUrl, folderQueryOptions, useDeleteObjects } from "@/api/catalog";
import type { Selection } from "@/api/restores";
import { RestoreDialog } from "@/components/restores/RestoreDialog";
import { Badge, Button, Card, ConfirmDialog, EmptyState, Input, QueryState, Table } from "@/components/ui";
import { formatCount } from "@/lib/format";
import { leafName } from "./browser-path";
import { FolderActions, SelectionBar } from "./FolderActions";
import { FolderCrumbs } from "./FolderCrumbs";
import { UploadList, useUploads } from "./FolderUploads";
import { folderColumns, type Row } from "./folder-columns";
import { useFolderSelection } from "./folder-selection";
import { NewFolderDialog } from "./NewFolderDialog";
import { rightsText, type SharedRights } from "./shared-rights";

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
  const folder = useInfiniteQuery(folderQueryOptions(bucket, prefix));
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [restoring, setRestoring] = useState<Selection | null>(null);
  const { uploads, fileInput, startUploads } = useUploads(bucket, prefix);
  const remove = useDeleteObjects();
  const [creatingFolder, setCreatingFolder] = useState(false);

  const pages = folder.data?.pages ?? [];
  const folders = pages.flatMap((p) => p.folders);
  // the current folder's own marker (`prefix/`, written by "New folder" or an S3 console) is not an entry of it
  const objects = pages.flatMap((p) => p.objects).filter((o) => o.key !== prefix);
  const [filter, setFilter] = useState("");
  const needle = filter.trim().toLowerCase();
  const matches = (key: string) => !needle || leafName(prefix, key).toLowerCase().includes(needle);
  const rows: Row[] = [
    ...folders.filter(matches).map((f): Row => ({ kind: "folder", prefix: f })),
    ...objects.filter((o) => matches(o.key)).map((o): Row => ({ kind: "object", object: o })),
  ];
  const {
    selectedKeys,
    selectedFolders,
    toggleKey,
    toggleFolder,
    clearSelection,
    archivedSelected,
    oneReadable,
  } = useFolderSelection(objects);

  const columns = folderColumns({
    prefix,
    selectedKeys,
    selectedFolders,
    toggleKey,
    toggleFolder,
    openFolder,
    openObject,
  });

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
        <div className="browser-filter">
          <Input
            label="Filter this folder"
            type="search"
            value={filter}
            placeholder="part of a name"
            onChange={(e) => setFilter(e.target.value)}
            hint={
              needle && folder.hasNextPage
                ? "Filters the entries loaded so far; Show more loads the rest."
                : undefined
            }
          />
        </div>
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
        <QueryState query={folder} loading="Loading the folder…">
          {() => (
            <Table
              caption={`Contents of ${bucket}/${prefix}`}
              columns={columns}
              rows={rows}
              rowKey={(row) => (row.kind === "folder" ? `f:${row.prefix}` : `o:${row.object.key}`)}
              empty={
                needle ? (
                  <EmptyState
                    title="Nothing matches"
                    description={`No name here contains “${filter.trim()}”.`}
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
        {folder.hasNextPage ? (
          <Button onClick={() => folder.fetchNextPage()} loading={folder.isFetchingNextPage}>
            Show more
          </Button>
        ) : null}
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
