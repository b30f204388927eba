import type { ObjectSummary } from "@/api/catalog";
import { icons } from "@/components/layout/icons";
import type { Column } from "@/components/ui";
import { formatBytes, formatDateTime } from "@/lib/format";
import { leafName } from "./browser-path";
import { RestoreBadge } from "./RestoreBadge";
import "./browser.css";

export type Row = { kind: "folder"; prefix: string } | { kind: "object"; object: ObjectSummary };

/** The folder table's columns: names that open, size, class, readability, age (the table adds the boxes).
 * Sorting orders the entries loaded so far; the catalog pages in key order. */
export function folderColumns({
  prefix,
  openFolder,
  openObject,
}: {
  prefix: string;
  openFolder: (prefix: string) => void;
  openObject: (key: string) => void;
}): Array<Column<Row>> {
  return [
    {
      id: "name",
      header: "Name",
      sortValue: (row: Row) => (row.kind === "folder" ? row.prefix : row.object.key),
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
      sortValue: (row: Row) => (row.kind === "object" ? row.object.size : null),
      cell: (row: Row) => (row.kind === "object" ? formatBytes(row.object.size) : ""),
    },
    {
      id: "class",
      header: "Class / tier",
      priority: 2,
      sortValue: (row: Row) => (row.kind === "object" ? row.object.storage_class : null),
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
      sortValue: (row: Row) => (row.kind === "object" ? row.object.last_modified : null),
      cell: (row: Row) => (row.kind === "object" ? formatDateTime(row.object.last_modified) : ""),
    },
  ];
}
