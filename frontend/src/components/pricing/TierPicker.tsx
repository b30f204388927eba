import { useQueries, useQuery } from "@tanstack/react-query";
import {
  type Catalog,
  type CatalogSummary,
  catalogQueryOptions,
  type InstallationTier,
  installationTiersQueryOptions,
} from "@/api/pricing";
import { Button } from "@/components/ui";
import { formatMoney } from "@/lib/format";
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
    const perMonth = price != null ? formatMoney(price, "GiB-month") : "";
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

/** The installation's own tiers as candidates (`tier:NAME`); unpriceable ones carry their reason. */
function InstallationTiers({
  tiers,
  selected,
  toggle,
  onAddAll,
}: {
  tiers: InstallationTier[];
  selected: string[];
  toggle: (ref: string, on: boolean) => void;
  onAddAll: () => void;
}) {
  const priceable = tiers.filter((t) => t.priceable);
  return (
    <div className="tier-picker__mine">
      <p className="tier-picker__catalog">
        Your tiers{" "}
        {priceable.length ? (
          <Button
            type="button"
            variant="secondary"
            size="sm"
            onClick={onAddAll}
            disabled={priceable.every((t) => selected.some((s) => s.split("@")[0] === t.ref))}
          >
            Compare all my tiers
          </Button>
        ) : null}
      </p>
      <ul className="tier-picker__list" aria-label="Your tiers">
        {tiers.map((t) => (
          <li key={t.id}>
            <label className="tier-picker__option">
              <input
                type="checkbox"
                checked={selected.includes(t.ref)}
                disabled={!t.priceable && !selected.includes(t.ref)}
                onChange={(e) => toggle(t.ref, e.target.checked)}
                aria-label={t.ref}
              />
              <span>
                <span className="mono">{t.name}</span>
                <span className="cell-sub">
                  {t.priceable
                    ? `priced as ${t.catalog}:${t.storage_class} — ${t.class_name}`
                    : `not priceable: ${t.reason}`}
                </span>
                {t.warning ? (
                  <span className="cell-sub tier-picker__warning" role="note">
                    {t.warning}
                  </span>
                ) : null}
              </span>
            </label>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Checkboxes of the tiers to compare: the installation's tiers, the scenario's catalog, other catalogs
 * folded below. */
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
  const mine = useQuery(installationTiersQueryOptions());
  const toggle = (ref: string, on: boolean) =>
    onChange(on ? [...selected, ref] : selected.filter((t) => t !== ref));
  const addAllMine = () => {
    const chosen = new Set(selected.map((t) => t.split("@")[0]));
    const refs = (mine.data ?? []).filter((t) => t.priceable && !chosen.has(t.ref)).map((t) => t.ref);
    onChange([...selected, ...refs]);
  };
  const loaded = details.map((d) => d.data).filter((d): d is Catalog => d !== undefined);
  const otherChosen = selected.filter((t) => t.includes(":") && !t.startsWith("tier:")).length;
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
      {mine.data?.length ? (
        <InstallationTiers tiers={mine.data} selected={selected} toggle={toggle} onAddAll={addAllMine} />
      ) : null}
      {main ? group(main, true) : <p className="muted">Loading the catalog…</p>}
      {others.length ? (
        <details className="tier-picker__more">
          <summary>Tiers from other catalogs ({otherChosen} chosen)</summary>
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
