import { type Key, useRef } from "react";

export interface TableSelection {
  /** Keys (as `rowKey` gives them) of the rows ticked. */
  selected: ReadonlySet<Key>;
  onChange: (next: Set<Key>) => void;
}

/**
 * The keys after ticking row `index` of `keys` (in the order shown): a shift-click sets every row from
 * the previous click to this one to the clicked row's new state, as file managers do.
 */
export function applyTick(
  selected: ReadonlySet<Key>,
  keys: readonly Key[],
  index: number,
  anchor: number | null,
  range: boolean,
): Set<Key> {
  const next = new Set(selected);
  const key = keys[index];
  if (key === undefined) return next;
  const on = !selected.has(key);
  const [from, to] =
    range && anchor !== null && anchor < keys.length
      ? [Math.min(anchor, index), Math.max(anchor, index)]
      : [index, index];
  for (let i = from; i <= to; i += 1) {
    const k = keys[i] as Key;
    if (on) next.add(k);
    else next.delete(k);
  }
  return next;
}

/** Select-all and range select over the rows as shown. */
export function useTableSelection(selection: TableSelection | undefined, keys: readonly Key[]) {
  const anchor = useRef<number | null>(null);
  const count = selection ? keys.filter((k) => selection.selected.has(k)).length : 0;
  return {
    all: keys.length > 0 && count === keys.length,
    some: count > 0 && count < keys.length,
    toggleAll: () => {
      if (!selection) return;
      const next = new Set(selection.selected);
      for (const k of keys) {
        if (count === keys.length) next.delete(k);
        else next.add(k);
      }
      selection.onChange(next);
    },
    tick: (index: number, range: boolean) => {
      if (!selection) return;
      selection.onChange(applyTick(selection.selected, keys, index, anchor.current, range));
      anchor.current = index;
    },
  };
}
