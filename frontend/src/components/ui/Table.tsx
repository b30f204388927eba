import { type Key, type ReactNode, useLayoutEffect, useRef, useState } from "react";
import { cx } from "./cx";

export interface Column<T> {
  /** Stable id of the column. */
  id: string;
  header: ReactNode;
  /** The column's name on a row card when `header` is not plain text (e.g. a visually hidden "Actions"). */
  label?: string;
  cell: (row: T) => ReactNode;
  align?: "start" | "end";
  /** Leave the column out of the table on narrow screens; the row cards still show it. */
  hideOnNarrow?: boolean;
}

export interface TableProps<T> {
  /** Names the table for screen readers; shown only when `showCaption` is set. */
  caption: string;
  showCaption?: boolean;
  columns: Array<Column<T>>;
  rows: readonly T[];
  rowKey: (row: T) => Key;
  /** Shown in place of the body when there are no rows. */
  empty?: ReactNode;
}

export type TableLayout = "table" | "cards";

/**
 * Picks the layout for a container: the table while its natural width fits, row cards otherwise.
 * `naturalWidth` is the table's width when it was last laid out as a table.
 */
export function chooseLayout(containerWidth: number, naturalWidth: number): TableLayout {
  return naturalWidth > containerWidth + 1 ? "cards" : "table";
}

/**
 * Re-measures on every resize of the container: a table that would overflow turns into one card per
 * row (each cell under its column's name), so no column is ever clipped or reachable only by scrolling.
 */
function useResponsiveLayout(rows: unknown, columnCount: number) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const natural = useRef(0);
  const [layout, setLayout] = useState<TableLayout>("table");

  // biome-ignore lint/correctness/useExhaustiveDependencies: re-measure when the content changes.
  useLayoutEffect(() => {
    const wrap = wrapRef.current;
    if (!wrap) return;
    const measure = () => {
      const table = wrap.querySelector("table");
      if (!table) return;
      if (wrap.dataset.layout === "table") natural.current = table.scrollWidth;
      const next = chooseLayout(wrap.clientWidth, natural.current);
      if (next !== wrap.dataset.layout) setLayout(next);
    };
    measure();
    if (typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(measure);
    observer.observe(wrap);
    return () => observer.disconnect();
  }, [rows, columnCount]);

  // A layout switch back to the table re-measures its natural width with the new content.
  useLayoutEffect(() => {
    const wrap = wrapRef.current;
    const table = wrap?.querySelector("table");
    if (wrap && table && layout === "table") {
      natural.current = table.scrollWidth;
      if (chooseLayout(wrap.clientWidth, natural.current) === "cards") setLayout("cards");
    }
  }, [layout]);

  return { wrapRef, layout };
}

function columnLabel<T>(c: Column<T>): string {
  if (c.label) return c.label;
  return typeof c.header === "string" ? c.header : "";
}

/** A data table that becomes one card per row when its container is too narrow for its columns. */
export function Table<T>({ caption, showCaption = false, columns, rows, rowKey, empty }: TableProps<T>) {
  const { wrapRef, layout } = useResponsiveLayout(rows, columns.length);
  if (rows.length === 0 && empty) return <>{empty}</>;
  const cards = layout === "cards";
  return (
    <div className={cx("ui-table-wrap", cards && "ui-table-wrap--cards")} ref={wrapRef} data-layout={layout}>
      <table className="ui-table">
        <caption className={showCaption ? "ui-table__caption" : "visually-hidden"}>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th
                key={c.id}
                scope="col"
                className={cx(
                  c.align === "end" && "ui-table__num",
                  c.hideOnNarrow && !cards && "ui-table__narrow-hide",
                )}
              >
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td
                  key={c.id}
                  data-label={columnLabel(c) || undefined}
                  className={cx(
                    c.align === "end" && "ui-table__num",
                    c.hideOnNarrow && !cards && "ui-table__narrow-hide",
                  )}
                >
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
