import { type Key, useState } from "react";
import type { ObjectSummary } from "@/api/catalog";

/** A folder row's key in the Browser's table (`f:` + prefix), an object's (`o:` + key). */
export const folderRowKey = (prefix: string) => `f:${prefix}`;
export const objectRowKey = (key: string) => `o:${key}`;

function withTag(selected: ReadonlySet<Key>, tag: string): Set<string> {
  const out = new Set<string>();
  for (const k of selected) if (String(k).startsWith(tag)) out.add(String(k).slice(tag.length));
  return out;
}

/** The objects and folders ticked in a folder, and what the selection allows: a restore when it holds
 * something archived (or a folder), a download when it is one readable object. */
export function useFolderSelection(objects: ObjectSummary[]) {
  const [selected, setSelected] = useState<ReadonlySet<Key>>(new Set());
  const selectedKeys = withTag(selected, "o:");
  const selectedFolders = withTag(selected, "f:");
  const selectedObjects = objects.filter((o) => selectedKeys.has(o.key));
  const only = selectedObjects.length === 1 && selectedFolders.size === 0 ? selectedObjects[0] : undefined;
  return {
    selection: { selected, onChange: setSelected },
    selectedKeys,
    selectedFolders,
    clearSelection: () => setSelected(new Set()),
    archivedSelected: selectedObjects.some((o) => o.tier_offline) || selectedFolders.size > 0,
    oneReadable: only && !only.tier_offline ? only : null,
  };
}
