import { type Key, type ReactNode, useRef, useState } from "react";
import { cx } from "./cx";
import { type Column, TableHead, TableRow } from "./TableParts";
import { useTableLayout } from "./table-layout";
import { type TableSelection, useTableSelection } from "./table-selection";
import { type SortState, useSortedRows } from "./table-sort";
import { useRowWindow, type VirtualRows } from "./table-window";

export type { Column } from "./TableParts";
export { chooseLayout, type TableLayout } from "./table-layout";
export type { TableSelection } from "./table-selection";
export type { SortState } from "./table-sort";
export type { VirtualRows } from "./table-window";

export interface TableProps<T> {
  /** Names the table for screen readers; shown only when `showCaption` is set. */
  caption: string;
  showCaption?: boolean;
  columns: Array<Column<T>>;
  rows: readonly T[];
  rowKey: (row: T) => Key;
  /** Names a row in its checkbox and details toggle; the row's key by default. */
  rowLabel?: (row: T) => string;
  /** Shown in place of the body when there are no rows. */
  empty?: ReactNode;
  /** Adds a checkbox per row, select-all in the header and shift-click range select. */
  selection?: TableSelection;
  /** Renders only the rows near the viewport of a scrolling box (long lists). */
  virtual?: VirtualRows;
  defaultSort?: SortState;
}

function prioritised<T>(columns: Array<Column<T>>): Array<Column<T>> {
  return columns.map((c) => (c.hideOnNarrow && c.priority === undefined ? { ...c, priority: 3 } : c));
}

/**
 * A data table: a table from tablet widths up (its least important columns fold into an expandable row
 * when they do not fit), one card per row on phones; sortable columns, a sticky header, optional
 * selection and windowed rendering for long lists.
 */
export function Table<T>({
  caption,
  showCaption = false,
  columns,
  rows,
  rowKey,
  rowLabel,
  empty,
  selection,
  virtual,
  defaultSort,
}: TableProps<T>) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const cols = prioritised(columns);
  const { layout, folded } = useTableLayout(wrapRef, cols, rows.length);
  const { sorted, sort, toggleSort } = useSortedRows(
    rows,
    (id) => cols.find((c) => c.id === id)?.sortValue,
    defaultSort ?? null,
  );
  const keys = sorted.map(rowKey);
  const picking = useTableSelection(selection, keys);
  const win = useRowWindow(wrapRef, sorted.length, virtual);
  const [open, setOpen] = useState<ReadonlySet<Key>>(new Set());
  if (rows.length === 0 && empty) return <>{empty}</>;

  const cards = layout === "cards";
  const shown = cards ? cols : cols.filter((c) => !folded.includes(c.id));
  const foldedCols = cards ? [] : cols.filter((c) => folded.includes(c.id));
  const span = shown.length + (selection ? 1 : 0) + (foldedCols.length ? 1 : 0);
  const toggleOpen = (key: Key) => {
    const next = new Set(open);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    setOpen(next);
  };

  return (
    <div
      className={cx("ui-table-wrap", cards && "ui-table-wrap--cards", virtual && "ui-table-wrap--scroll")}
      ref={wrapRef}
      data-layout={layout}
    >
      <table className="ui-table">
        <caption className={showCaption ? "ui-table__caption" : "visually-hidden"}>{caption}</caption>
        <TableHead
          columns={shown}
          selectAll={selection ? { ...picking, onToggle: picking.toggleAll } : undefined}
          foldable={foldedCols.length > 0}
          sort={sort}
          onSort={toggleSort}
        />
        <tbody>
          {win.before > 0 ? (
            // biome-ignore lint/a11y/noAriaHiddenOnFocusable: a spacer row has no content and takes no focus
            <tr aria-hidden="true" className="ui-table__spacer" style={{ height: win.before }}>
              <td colSpan={span} />
            </tr>
          ) : null}
          {sorted.slice(win.start, win.end).map((row, i) => {
            const index = win.start + i;
            const key = keys[index] as Key;
            return (
              <TableRow
                key={key}
                row={row}
                label={rowLabel ? rowLabel(row) : String(key)}
                columns={shown}
                folded={foldedCols}
                pick={
                  selection
                    ? {
                        checked: selection.selected.has(key),
                        onTick: (range) => picking.tick(index, range),
                      }
                    : undefined
                }
                open={open.has(key)}
                onToggleOpen={() => toggleOpen(key)}
              />
            );
          })}
          {win.after > 0 ? (
            // biome-ignore lint/a11y/noAriaHiddenOnFocusable: a spacer row has no content and takes no focus
            <tr aria-hidden="true" className="ui-table__spacer" style={{ height: win.after }}>
              <td colSpan={span} />
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  );
}
