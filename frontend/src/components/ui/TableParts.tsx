import { type ReactNode, useEffect, useRef } from "react";
import { cx } from "./cx";
import type { Prioritised } from "./table-layout";
import type { SortState, SortValue } from "./table-sort";

export interface Column<T> extends Prioritised {
  /** Stable id of the column. */
  id: string;
  header: ReactNode;
  /** The column's name on a row card when `header` is not plain text (e.g. a visually hidden "Actions"). */
  label?: string;
  cell: (row: T) => ReactNode;
  align?: "start" | "end";
  /** Shorthand for a low priority: the column folds into the row's details first when space runs out. */
  hideOnNarrow?: boolean;
  /** Makes the column sortable by this value of a row. */
  sortValue?: (row: T) => SortValue;
}

export function columnLabel<T>(c: Column<T>): string {
  if (c.label) return c.label;
  return typeof c.header === "string" ? c.header : "";
}

function SelectAll({ all, some, onToggle }: { all: boolean; some: boolean; onToggle: () => void }) {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = some;
  }, [some]);
  return <input ref={ref} type="checkbox" aria-label="Select all rows" checked={all} onChange={onToggle} />;
}

/** The header row: a select-all box, a column for the details toggle, and sortable column names. */
export function TableHead<T>({
  columns,
  selectAll,
  foldable,
  sort,
  onSort,
}: {
  columns: Array<Column<T>>;
  selectAll?: { all: boolean; some: boolean; onToggle: () => void };
  foldable: boolean;
  sort: SortState | null;
  onSort: (id: string) => void;
}) {
  return (
    <thead>
      <tr>
        {selectAll ? (
          <th scope="col" className="ui-table__pick">
            <SelectAll {...selectAll} />
          </th>
        ) : null}
        {foldable ? (
          <th scope="col" className="ui-table__pick">
            <span className="visually-hidden">Details</span>
          </th>
        ) : null}
        {columns.map((c) => {
          const current = sort?.id === c.id ? sort.direction : undefined;
          return (
            <th
              key={c.id}
              scope="col"
              className={cx(c.align === "end" && "ui-table__num")}
              aria-sort={c.sortValue ? (current ?? "none") : undefined}
            >
              {c.sortValue ? (
                <button type="button" className="ui-table__sort" onClick={() => onSort(c.id)}>
                  {c.header}
                  <span aria-hidden="true" className="ui-table__sort-mark">
                    {current === "ascending" ? "▲" : current === "descending" ? "▼" : "↕"}
                  </span>
                </button>
              ) : (
                c.header
              )}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

/** One row, and below it (when open) the columns folded away for lack of width. */
export function TableRow<T>({
  row,
  label,
  columns,
  folded,
  pick,
  open,
  onToggleOpen,
}: {
  row: T;
  label: string;
  columns: Array<Column<T>>;
  folded: Array<Column<T>>;
  pick?: { checked: boolean; onTick: (range: boolean) => void };
  open: boolean;
  onToggleOpen: () => void;
}) {
  const span = columns.length + (pick ? 1 : 0) + 1;
  return (
    <>
      <tr data-row="" aria-selected={pick ? pick.checked : undefined}>
        {pick ? (
          <td className="ui-table__pick">
            <input
              type="checkbox"
              aria-label={`Select ${label}`}
              checked={pick.checked}
              onChange={(e) => pick.onTick((e.nativeEvent as MouseEvent).shiftKey === true)}
            />
          </td>
        ) : null}
        {folded.length ? (
          <td className="ui-table__pick">
            <button
              type="button"
              className="ui-table__expand"
              aria-expanded={open}
              aria-label={`More about ${label}`}
              onClick={onToggleOpen}
            >
              {open ? "▾" : "▸"}
            </button>
          </td>
        ) : null}
        {columns.map((c) => (
          <td
            key={c.id}
            data-label={columnLabel(c) || undefined}
            className={cx(c.align === "end" && "ui-table__num")}
          >
            {c.cell(row)}
          </td>
        ))}
      </tr>
      {open && folded.length ? (
        <tr className="ui-table__details-row">
          <td colSpan={span}>
            <dl className="ui-table__details">
              {folded.map((c) => (
                <div key={c.id}>
                  <dt>{columnLabel(c)}</dt>
                  <dd>{c.cell(row)}</dd>
                </div>
              ))}
            </dl>
          </td>
        </tr>
      ) : null}
    </>
  );
}
