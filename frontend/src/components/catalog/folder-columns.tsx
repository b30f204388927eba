import type { ObjectSummary } from "@/api/catalog";
import { icons } from "@/components/layout/icons";
import type { Column } from "@/components/ui";
import { formatBytes, formatDateTime } from "@/lib/format";
import { leafName } from "./browser-path";
import { RestoreBadge } from "./RestoreBadge";

export type Row = { kind: "folder"; prefix: string } | { kind: "object"; object: ObjectSummary };

/** The folder table's columns: selection boxes, names that open, size, class, readability, age. */
export function folderColumns({
  prefix,
  selectedKeys,
  selectedFolders,
  toggleKey,
  toggleFolder,
  openFolder,
  openObject,
}: {
  prefix: string;
  selectedKeys: Set<string>;
  selectedFolders: Set<string>;
  toggleKey: (key: string) => void;
  toggleFolder: (prefix: string) => void;
  openFolder: (prefix: string) => void;
  openObject: (key: string) => void;
}): Array<Column<Row>> {
  return [
    {
      id: "select",
      header: <span className="visually-hidden">Select</span>,
      cell: (row: Row) =>
        row.kind === "folder" ? (
          <input
            type="checkbox"
            aria-label={`Select folder ${row.prefix}`}
            checked={selectedFolders.has(row.prefix)}
            onChange={() => toggleFolder(row.prefix)}
          />
        ) : (
          <input
            type="checkbox"
            aria-label={`Select ${row.object.key}`}
            checked={selectedKeys.has(row.object.key)}
            onChange={() => toggleKey(row.object.key)}
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
}
