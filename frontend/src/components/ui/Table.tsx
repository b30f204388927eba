import type { Key, ReactNode } from "react";
import { cx } from "./cx";

export interface Column<T> {
  /** Stable id of the column. */
  id: string;
  header: ReactNode;
  cell: (row: T) => ReactNode;
  align?: "start" | "end";
  /** Hide the column on narrow screens when it is not essential. */
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

/** A data table that scrolls horizontally inside its own focusable region on narrow screens. */
export function Table<T>({ caption, showCaption = false, columns, rows, rowKey, empty }: TableProps<T>) {
  if (rows.length === 0 && empty) return <>{empty}</>;
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard.
    <section className="ui-table-wrap" aria-label={`${caption} (scrollable)`} tabIndex={0}>
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
                  c.hideOnNarrow && "ui-table__narrow-hide",
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
                  className={cx(
                    c.align === "end" && "ui-table__num",
                    c.hideOnNarrow && "ui-table__narrow-hide",
                  )}
                >
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
