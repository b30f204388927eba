import { useQueries } from "@tanstack/react-query";
import { type Catalog, type CatalogSummary, catalogQueryOptions } from "@/api/pricing";
import { SPEEDS } from "./scenario-form";

export interface TierOption {
  ref: string;
  label: string;
  hint: string;
}

/** The tiers a catalog offers: one per class, one per restore speed for archive classes. */
export function tierOptions(catalog: Catalog, primary: boolean): TierOption[] {
  const prefix = primary ? "" : `${catalog.id}:`;
  return catalog.classes.flatMap((cls) => {
    const price = cls.storage?.[0]?.price;
    const perMonth = price != null ? `${price} $/GiB-month` : "";
    const speeds = SPEEDS.filter((s) => cls.restore?.[s]);
    if (!speeds.length) return [{ ref: `${prefix}${cls.id}`, label: cls.name, hint: perMonth }];
    return speeds.map((s) => {
      const r = cls.restore?.[s];
      return {
        ref: `${prefix}${cls.id}@${s}`,
        label: `${cls.name} · ${s} restores`,
        hint: `${perMonth}${r ? `, restore ≈ ${r.typical_hours} h` : ""}`,
      };
    });
  });
}

/** One tier per class of a catalog, archive classes with standard restores (or the speed they have). */
export function defaultTiers(catalog: Catalog): string[] {
  const options = tierOptions(catalog, true);
  return catalog.classes.map((cls) => {
    const own = options.filter((o) => o.ref === cls.id || o.ref.startsWith(`${cls.id}@`));
    return (own.find((o) => o.ref === cls.id || o.ref.endsWith("@standard")) ?? own[0])?.ref ?? cls.id;
  });
}

/** Checkboxes of the tiers to compare: the scenario's catalog first, other catalogs folded below. */
export function TierPicker({
  catalogs,
  primary,
  selected,
  onChange,
  error,
}: {
  catalogs: CatalogSummary[];
  primary: string;
  selected: string[];
  onChange: (tiers: string[]) => void;
  error?: string;
}) {
  const details = useQueries({ queries: catalogs.map((c) => catalogQueryOptions(c.id)) });
  const toggle = (ref: string, on: boolean) =>
    onChange(on ? [...selected, ref] : selected.filter((t) => t !== ref));
  const loaded = details.map((d) => d.data).filter((d): d is Catalog => d !== undefined);
  const main = loaded.find((c) => c.id === primary);
  const others = loaded.filter((c) => c.id !== primary);
  const group = (catalog: Catalog, isPrimary: boolean) => (
    <ul className="tier-picker__list">
      {tierOptions(catalog, isPrimary).map((o) => (
        <li key={o.ref}>
          <label className="tier-picker__option">
            <input
              type="checkbox"
              checked={selected.includes(o.ref)}
              onChange={(e) => toggle(o.ref, e.target.checked)}
              aria-label={o.ref}
            />
            <span>
              <span className="mono">{o.ref}</span>
              <span className="cell-sub">
                {o.label}
                {o.hint ? ` — ${o.hint}` : ""}
              </span>
            </span>
          </label>
        </li>
      ))}
    </ul>
  );
  return (
    <fieldset className="tier-picker" aria-describedby={error ? "tier-picker-error" : undefined}>
      <legend>Tiers to compare</legend>
      {main ? group(main, true) : <p className="muted">Loading the catalog…</p>}
      {others.length ? (
        <details className="tier-picker__more">
          <summary>
            Tiers from other catalogs ({selected.filter((t) => t.includes(":")).length} chosen)
          </summary>
          {others.map((c) => (
            <div key={c.id}>
              <p className="tier-picker__catalog">
                {c.id} <span className="muted">({c.valid_from})</span>
              </p>
              {group(c, false)}
            </div>
          ))}
        </details>
      ) : null}
      {error ? (
        <p className="ui-field__error" id="tier-picker-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
