import { useInfiniteQuery } from "@tanstack/react-query";
import { useRef, useState } from "react";
import {
  downloadUrl,
  folderQueryOptions,
  type ObjectSummary,
  type UploadProgress,
  uploadFile,
  useDeleteBucket,
  useDeleteObjects,
  useUploadInvalidation,
} from "@/api/catalog";
import type { Selection } from "@/api/restores";
import { icons } from "@/components/layout/icons";
import { RestoreDialog } from "@/components/restores/RestoreDialog";
import {
  Badge,
  Button,
  Card,
  ConfirmDialog,
  EmptyState,
  ErrorBanner,
  errorText,
  Input,
  LoadingState,
  ProgressBar,
  Table,
} from "@/components/ui";
import { formatBytes, formatCount, formatDateTime } from "@/lib/format";
import { crumbs, leafName } from "./browser-path";
import { NewFolderDialog } from "./NewFolderDialog";
import { RestoreBadge } from "./RestoreBadge";

type Row = { kind: "folder"; prefix: string } | { kind: "object"; object: ObjectSummary };

/** A bucket another user shares with the viewer: only what the sharing grants is offered (the API decides each
 * request the same way; this only spares the viewer buttons that would be refused). */
export interface SharedRights {
  owner: string;
  write: boolean;
  delete: boolean;
}

interface UploadState {
  name: string;
  loaded: number;
  total: number;
  error?: string;
  done?: boolean;
}

/** "read only", or what the viewer may do besides reading. */
export function rightsText(rights: { write: boolean; delete: boolean }): string {
  const more = [...(rights.write ? ["upload"] : []), ...(rights.delete ? ["delete"] : [])];
  return more.length ? `you may read, ${more.join(" and ")}` : "read only";
}

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
  const [selectedKeys, setSelectedKeys] = useState<Set<string>>(new Set());
  const [selectedFolders, setSelectedFolders] = useState<Set<string>>(new Set());
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [restoring, setRestoring] = useState<Selection | null>(null);
  const [uploads, setUploads] = useState<UploadState[]>([]);
  const fileInput = useRef<HTMLInputElement>(null);
  const remove = useDeleteObjects();
  const removeBucket = useDeleteBucket();
  const [confirmBucketDelete, setConfirmBucketDelete] = useState(false);
  const [creatingFolder, setCreatingFolder] = useState(false);
  const invalidate = useUploadInvalidation();

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
  const selectedObjects = objects.filter((o) => selectedKeys.has(o.key));
  const archivedSelected = selectedObjects.some((o) => o.tier_offline) || selectedFolders.size > 0;
  const oneReadable =
    selectedObjects.length === 1 &&
    selectedFolders.size === 0 &&
    selectedObjects[0] &&
    !selectedObjects[0].tier_offline
      ? selectedObjects[0]
      : null;

  const toggle = (set: Set<string>, value: string, update: (s: Set<string>) => void) => {
    const next = new Set(set);
    if (next.has(value)) next.delete(value);
    else next.add(value);
    update(next);
  };
  const clearSelection = () => {
    setSelectedKeys(new Set());
    setSelectedFolders(new Set());
  };

  const startUploads = async (files: FileList | null) => {
    if (!files || files.length === 0) return;
    const list = Array.from(files);
    setUploads(list.map((f) => ({ name: f.name, loaded: 0, total: f.size })));
    for (const [i, file] of list.entries()) {
      const update = (patch: Partial<UploadState>) =>
        setUploads((all) => all.map((u, j) => (j === i ? { ...u, ...patch } : u)));
      try {
        await uploadFile(bucket, prefix, file, (p: UploadProgress) =>
          update({ loaded: p.loaded, total: p.total }),
        );
        update({ done: true, loaded: file.size });
      } catch (err) {
        update({ error: errorText(err) });
      }
    }
    await invalidate(bucket);
    if (fileInput.current) fileInput.current.value = "";
  };

  const columns = [
    {
      id: "select",
      header: <span className="visually-hidden">Select</span>,
      cell: (row: Row) =>
        row.kind === "folder" ? (
          <input
            type="checkbox"
            aria-label={`Select folder ${row.prefix}`}
            checked={selectedFolders.has(row.prefix)}
            onChange={() => toggle(selectedFolders, row.prefix, setSelectedFolders)}
          />
        ) : (
          <input
            type="checkbox"
            aria-label={`Select ${row.object.key}`}
            checked={selectedKeys.has(row.object.key)}
            onChange={() => toggle(selectedKeys, row.object.key, setSelectedKeys)}
          />
        ),
    },
    {
      id: "name",
      header: "Name",
      cell: (row: Row) =>
        row.kind === "folder" ? (
          <button type="button" className="browser-link" onClick={() => openFolder(row.prefix)}>
            <span className="browser-folder-icon">{icons.browser}</span>
            {leafName(prefix, row.prefix)}
          </button>
        ) : (
          <button type="button" className="browser-link" onClick={() => openObject(row.object.key)}>
            {leafName(prefix, row.object.key)}
          </button>
        ),
    },
    {
      id: "size",
      header: "Size",
      align: "end" as const,
      cell: (row: Row) => (row.kind === "object" ? formatBytes(row.object.size) : ""),
    },
    {
      id: "class",
      header: "Class / tier",
      cell: (row: Row) =>
        row.kind === "object" ? (
          <span>
            {row.object.storage_class}
            {row.object.tier.toLowerCase() !== row.object.storage_class.toLowerCase() ? (
              <span className="muted"> · {row.object.tier}</span>
            ) : null}
          </span>
        ) : (
          ""
        ),
    },
    {
      id: "state",
      header: "Readable",
      hideOnNarrow: true,
      cell: (row: Row) =>
        row.kind === "object" ? (
          <RestoreBadge state={row.object.restore_state} offline={row.object.tier_offline} />
        ) : (
          ""
        ),
    },
    {
      id: "modified",
      header: "Last modified",
      hideOnNarrow: true,
      cell: (row: Row) => (row.kind === "object" ? formatDateTime(row.object.last_modified) : ""),
    },
  ];

  const selectionCount = selectedKeys.size + selectedFolders.size;
  return (
    <Card
      title={
        <nav aria-label="Folder path" className="browser-crumbs">
          {crumbs(bucket, prefix).map((c, i, all) =>
            i === all.length - 1 ? (
              <span key={c.prefix} aria-current="page">
                {c.label}
              </span>
            ) : (
              <span key={c.prefix}>
                <button type="button" className="browser-link" onClick={() => openFolder(c.prefix)}>
                  {c.label}
                </button>
                <span aria-hidden="true"> / </span>
              </span>
            ),
          )}
        </nav>
      }
      className="browser-folder"
      actions={
        <div className="row">
          <input
            ref={fileInput}
            type="file"
            multiple
            className="visually-hidden"
            aria-label="Files to upload"
            onChange={(e) => startUploads(e.target.files)}
          />
          {mayWrite ? (
            <>
              <Button size="sm" variant="primary" onClick={() => fileInput.current?.click()}>
                Upload files
              </Button>
              <Button size="sm" onClick={() => setCreatingFolder(true)}>
                New folder
              </Button>
            </>
          ) : null}
          {prefix === "" && !shared ? (
            <Button
              size="sm"
              variant="ghost"
              className="button-danger-text"
              onClick={() => setConfirmBucketDelete(true)}
            >
              Delete bucket
            </Button>
          ) : null}
        </div>
      }
    >
      <div className="stack">
        {shared ? (
          <p className="browser-shared-note">
            <Badge tone="info">shared</Badge> Shared with you by <strong>{shared.owner}</strong>:{" "}
            {rightsText(shared)}
          </p>
        ) : null}
        {uploads.length ? (
          <ul className="browser-uploads" aria-label="Uploads">
            {uploads.map((u) => (
              <li key={u.name}>
                <ProgressBar
                  label={`Uploading ${u.name}`}
                  value={u.loaded}
                  max={u.total || 1}
                  thresholds={null}
                  valueText={`${formatBytes(u.loaded)} of ${formatBytes(u.total)}`}
                  caption={
                    u.error ? (
                      <span className="browser-error">
                        {u.name}: {u.error}
                      </span>
                    ) : (
                      `${u.name}: ${u.done ? "uploaded" : `${formatBytes(u.loaded)} of ${formatBytes(u.total)}`}`
                    )
                  }
                />
              </li>
            ))}
          </ul>
        ) : null}
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
        <div className="row browser-selection" aria-live="polite">
          <span className="muted">
            {selectionCount ? `${formatCount(selectionCount)} selected` : "Nothing selected"}
          </span>
          {oneReadable ? (
            <a
              className="ui-button ui-button--secondary ui-button--sm"
              href={downloadUrl(bucket, oneReadable.key)}
              download
            >
              Download
            </a>
          ) : null}
          {shared ? null : (
            <Button
              size="sm"
              disabled={!archivedSelected}
              onClick={() =>
                setRestoring({ bucket, keys: [...selectedKeys], prefixes: [...selectedFolders] })
              }
            >
              Restore…
            </Button>
          )}
          {mayDelete ? (
            <Button
              size="sm"
              variant="danger"
              disabled={selectedKeys.size === 0}
              onClick={() => setConfirmDelete(true)}
            >
              Delete
            </Button>
          ) : null}
        </div>
        {folder.isPending ? <LoadingState label="Loading the folder…" /> : null}
        {folder.isError ? <ErrorBanner error={folder.error} onRetry={() => folder.refetch()} /> : null}
        {folder.data ? (
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
        ) : null}
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
      <ConfirmDialog
        open={confirmBucketDelete}
        title={`Delete the bucket ${bucket}?`}
        description="Only an empty bucket can be deleted: delete its objects first. Unfinished uploads go with it."
        confirmLabel="Delete bucket"
        pending={removeBucket.isPending}
        error={removeBucket.error}
        onCancel={() => {
          setConfirmBucketDelete(false);
          removeBucket.reset();
        }}
        onConfirm={() => removeBucket.mutate(bucket, { onSuccess: onBucketDeleted })}
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
