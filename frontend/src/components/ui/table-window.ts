import { type RefObject, useEffect, useLayoutEffect, useState } from "react";

export interface VirtualRows {
  /** Height of one row in px before a row has been measured. */
  rowHeight: number;
  /** Called when the rows shown come near the end: the place to fetch the next page. */
  onNearEnd?: () => void;
}

const OVERSCAN = 12;
// Without a measured box (first render, tests) enough rows to fill a tall screen.
const FALLBACK_VIEW_PX = 1200;

/** The slice of rows to render for a scroll position: the visible ones plus a margin either side. */
export function visibleRange(count: number, scrollTop: number, viewHeight: number, rowHeight: number) {
  const view = viewHeight > 0 ? viewHeight : FALLBACK_VIEW_PX;
  const start = Math.max(0, Math.floor(scrollTop / rowHeight) - OVERSCAN);
  const end = Math.min(count, Math.ceil((scrollTop + view) / rowHeight) + OVERSCAN);
  return { start, end };
}

/**
 * Renders only the rows near the viewport of a scrolling table box, so a folder of 100,000 entries
 * costs as much as one screenful; the rest are stood in for by two spacer rows of the right height.
 */
export function useRowWindow(
  wrapRef: RefObject<HTMLDivElement | null>,
  count: number,
  virtual: VirtualRows | undefined,
) {
  const [scroll, setScroll] = useState({ top: 0, height: 0 });
  const [measured, setMeasured] = useState(0);
  const rowHeight = measured || virtual?.rowHeight || 1;

  const enabled = !!virtual;
  useEffect(() => {
    const wrap = wrapRef.current;
    if (!wrap || !enabled) return;
    const update = () => setScroll({ top: wrap.scrollTop, height: wrap.clientHeight });
    update();
    wrap.addEventListener("scroll", update, { passive: true });
    window.addEventListener("resize", update);
    return () => {
      wrap.removeEventListener("scroll", update);
      window.removeEventListener("resize", update);
    };
  }, [wrapRef, enabled]);

  // Rows are as tall as their content makes them: measure one once it is on screen.
  useLayoutEffect(() => {
    const row = wrapRef.current?.querySelector<HTMLElement>("tbody tr[data-row]");
    const h = row?.getBoundingClientRect().height ?? 0;
    if (virtual && h > 0 && Math.abs(h - measured) > 0.5) setMeasured(h);
  });

  const range = virtual
    ? visibleRange(count, scroll.top, scroll.height, rowHeight)
    : { start: 0, end: count };
  const nearEnd = virtual?.onNearEnd;
  useEffect(() => {
    if (nearEnd && range.end >= count - OVERSCAN) nearEnd();
  }, [nearEnd, range.end, count]);

  return {
    ...range,
    before: range.start * rowHeight,
    after: (count - range.end) * rowHeight,
  };
}
