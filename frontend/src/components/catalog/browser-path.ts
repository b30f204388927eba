/** Folder arithmetic of the Browser: keys are flat, "/" makes folders. */

export interface Crumb {
  label: string;
  prefix: string;
}

/** The breadcrumb of a folder prefix: bucket root first, then each folder down to `prefix`. */
export function crumbs(bucket: string, prefix: string): Crumb[] {
  const out: Crumb[] = [{ label: bucket, prefix: "" }];
  let path = "";
  for (const part of prefix.split("/").slice(0, -1)) {
    path += `${part}/`;
    out.push({ label: part || "(empty name)", prefix: path });
  }
  return out;
}

/** What a row shows for a key or folder inside `prefix`: the rest of its name. */
export function leafName(prefix: string, keyOrFolder: string): string {
  const rest = keyOrFolder.slice(prefix.length);
  return rest === "" ? "(this folder's marker)" : rest;
}

/** The folder a key lives in (its prefix up to the last "/"). */
export function parentPrefix(key: string): string {
  const cut = key.lastIndexOf("/", key.length - 2);
  return cut < 0 ? "" : key.slice(0, cut + 1);
}

export const ARCHIVE_CLASSES = new Set(["GLACIER", "DEEP_ARCHIVE"]);
