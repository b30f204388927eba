import { useInfiniteQuery } from "@tanstack/react-query";
import { folderQueryOptions } from "@/api/catalog";
import { useSettled } from "@/lib/useSettled";
import type { Row } from "./folder-columns";

/**
 * A folder's entries as table rows, page by page from the catalog, narrowed on the server to names
 * starting with the filter, so a folder of 100,000 objects is searched whole without loading it.
 */
export function useFolderListing(bucket: string, prefix: string, filter: string) {
  // one catalog request per pause in typing, not one per keystroke
  const startsWith = useSettled(filter.trim(), 250);
  const folder = useInfiniteQuery(folderQueryOptions(bucket, prefix, startsWith));
  const pages = folder.data?.pages ?? [];
  // the current folder's own marker (`prefix/`, written by "New folder" or an S3 console) is not an entry of it
  const objects = pages.flatMap((p) => p.objects).filter((o) => o.key !== prefix);
  const rows: Row[] = [
    ...pages.flatMap((p) => p.folders).map((f): Row => ({ kind: "folder", prefix: f })),
    ...objects.map((o): Row => ({ kind: "object", object: o })),
  ];
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = folder;
  const loadMore = () => {
    if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
  };
  return { folder, objects, rows, startsWith, loadMore };
}
