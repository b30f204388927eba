import { useState } from "react";
import type { ObjectSummary } from "@/api/catalog";

function toggled(set: Set<string>, value: string): Set<string> {
  const next = new Set(set);
  if (next.has(value)) next.delete(value);
  else next.add(value);
  return next;
}

/** The objects and folders ticked in a folder, and what the selection allows: a restore when it holds
 * something archived (or a folder), a download when it is one readable object. */
export function useFolderSelection(objects: ObjectSummary[]) {
  const [selectedKeys, setSelectedKeys] = useState<Set<string>>(new Set());
  const [selectedFolders, setSelectedFolders] = useState<Set<string>>(new Set());
  const selectedObjects = objects.filter((o) => selectedKeys.has(o.key));
  const only = selectedObjects.length === 1 && selectedFolders.size === 0 ? selectedObjects[0] : undefined;
  return {
    selectedKeys,
    selectedFolders,
    toggleKey: (key: string) => setSelectedKeys(toggled(selectedKeys, key)),
    toggleFolder: (prefix: string) => setSelectedFolders(toggled(selectedFolders, prefix)),
    clearSelection: () => {
      setSelectedKeys(new Set());
      setSelectedFolders(new Set());
    },
    archivedSelected: selectedObjects.some((o) => o.tier_offline) || selectedFolders.size > 0,
    oneReadable: only && !only.tier_offline ? only : null,
  };
}
