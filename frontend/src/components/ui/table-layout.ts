import { type RefObject, useLayoutEffect, useState } from "react";

export type TableLayout = "table" | "cards";

/** Below this screen width a list reads better as one card per row than as a table. */
export const CARDS_BELOW_PX = 640;

/** The layout for a screen width: cards on phones, a table everywhere else. */
export function chooseLayout(viewportWidth: number): TableLayout {
  return viewportWidth < CARDS_BELOW_PX ? "cards" : "table";
}

export interface Prioritised {
  id: string;
  /** 1 (never folded) is the default; a higher number folds into the row's details sooner. */
  priority?: number;
}

/**
 * The next column to fold into the row details when the table is wider than its box: the highest
 * priority number first, the rightmost among equals; null when only priority-1 columns are left.
 */
export function nextToFold(columns: readonly Prioritised[], folded: readonly string[]): string | null {
  let pick: Prioritised | null = null;
  for (const c of columns) {
    const p = c.priority ?? 1;
    if (p <= 1 || folded.includes(c.id)) continue;
    if (!pick || p >= (pick.priority ?? 1)) pick = c;
  }
  return pick ? pick.id : null;
}

interface LayoutState {
  layout: TableLayout;
  folded: string[];
}

/**
 * Lays a table out for its box: on a phone as cards; otherwise as a table that folds its least important
 * columns into an expandable row until it fits. Cards remain the fallback for a table whose essential
 * columns alone overflow, so nothing is ever clipped.
 */
export function useTableLayout(
  wrapRef: RefObject<HTMLDivElement | null>,
  columns: readonly Prioritised[],
  content: unknown,
) {
  const [width, setWidth] = useState(0);
  const [state, setState] = useState<LayoutState>(() => ({
    layout: chooseLayout(typeof window === "undefined" ? 1024 : window.innerWidth),
    folded: [],
  }));
  const columnKey = columns.map((c) => c.id).join("|");

  useLayoutEffect(() => {
    const wrap = wrapRef.current;
    if (!wrap || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => setWidth(Math.round(wrap.clientWidth)));
    observer.observe(wrap);
    return () => observer.disconnect();
  }, [wrapRef]);

  // A new width or new content starts over from every column shown, then folds again as needed.
  // biome-ignore lint/correctness/useExhaustiveDependencies: width, content and columns are the triggers.
  useLayoutEffect(() => {
    const layout = chooseLayout(window.innerWidth);
    setState((prev) => (prev.layout === layout && prev.folded.length === 0 ? prev : { layout, folded: [] }));
  }, [width, content, columnKey]);

  useLayoutEffect(() => {
    const wrap = wrapRef.current;
    const table = wrap?.querySelector("table");
    if (!wrap || !table || state.layout === "cards") return;
    if (table.scrollWidth <= wrap.clientWidth + 1) return;
    const fold = nextToFold(columns, state.folded);
    setState(fold ? { layout: "table", folded: [...state.folded, fold] } : { layout: "cards", folded: [] });
  }, [state, columns, wrapRef]);

  return state;
}
