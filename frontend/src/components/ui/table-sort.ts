import { useMemo, useState } from "react";

export type SortValue = string | number | null | undefined;
export type SortDirection = "ascending" | "descending";
export interface SortState {
  id: string;
  direction: SortDirection;
}

/** Empty values sort last in either direction; numbers by value, text by locale with numbers inside. */
export function compareValues(a: SortValue, b: SortValue, direction: SortDirection): number {
  const emptyA = a === null || a === undefined || a === "";
  const emptyB = b === null || b === undefined || b === "";
  if (emptyA || emptyB) return emptyA === emptyB ? 0 : emptyA ? 1 : -1;
  const order =
    typeof a === "number" && typeof b === "number"
      ? a - b
      : String(a).localeCompare(String(b), undefined, { numeric: true });
  return direction === "ascending" ? order : -order;
}

/** The next state of a header click: ascending, then descending, then back to the rows' own order. */
export function nextSort(current: SortState | null, id: string): SortState | null {
  if (!current || current.id !== id) return { id, direction: "ascending" };
  return current.direction === "ascending" ? { id, direction: "descending" } : null;
}

/** Rows in the order the user picked by clicking headers; a stable sort keeps equal rows as given. */
export function useSortedRows<T>(
  rows: readonly T[],
  sortValue: (id: string) => ((row: T) => SortValue) | undefined,
  initial: SortState | null = null,
) {
  const [sort, setSort] = useState<SortState | null>(initial);
  const by = sort ? sortValue(sort.id) : undefined;
  const sorted = useMemo(() => {
    if (!sort || !by) return rows;
    return [...rows].sort((a, b) => compareValues(by(a), by(b), sort.direction));
  }, [rows, sort, by]);
  return { sorted, sort, toggleSort: (id: string) => setSort((s) => nextSort(s, id)) };
}
