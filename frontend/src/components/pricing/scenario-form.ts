// The what-if form's state (strings, as typed) and its conversion to and from the API's scenario.
import type { CatalogSummary, InstallationTier, ScenarioBody } from "@/api/pricing";

export type Speed = "expedited" | "standard" | "bulk";
export type Destination = "internet" | "research-network" | "same-region" | "inter-region" | "other-cloud";
export type RequestsPer = "month" | "day" | "hour";
export type VolumeUnit = "GiB" | "TiB" | "PiB";
/** GiB in one of each unit a volume can be typed in; the scenario keeps GiB. */
export const VOLUME_UNITS: Record<VolumeUnit, number> = { GiB: 1, TiB: 1024, PiB: 1024 ** 2 };
export const SPEEDS: Speed[] = ["expedited", "standard", "bulk"];

export interface FixedCostRow {
  name: string;
  monthly: string;
}

export interface RuleRow {
  afterDays: string;
  to: string;
}

export interface HybridRow {
  tier: string;
  dataPercent: string;
  readPercent: string;
}

export interface FormState {
  catalog: string;
  /** Tier references: `CLASS`, `catalog-id:CLASS`, `tier:NAME` (one of ours), with `@speed` for archives. */
  tiers: string[];
  /** The stored volume as typed, in `volumeUnit`. */
  volume: string;
  volumeUnit: VolumeUnit;
  objects: string;
  readsPerMonth: string;
  readPercent: string;
  restoreSpeed: Speed;
  restoredCopyDays: string;
  egress: Destination;
  egressPercent: string;
  months: string;
  writesPerMonth: string;
  earlyDeletionPercent: string;
  earlyDeletionAgeDays: string;
  fixedCosts: FixedCostRow[];
  /** Bytes a client transfers per byte it needs (a FUSE client's read-ahead). */
  readAmplification: string;
  /** Raw request counts besides whole-object reads and writes. */
  requestsPer: RequestsPer;
  requestsGet: string;
  requestsHead: string;
  requestsPut: string;
  requestsList: string;
  oneOff: {
    initialUpload: boolean;
    transitionIn: boolean;
    deleteAtEnd: boolean;
  };
  /** Last day of the plan (YYYY-MM-DD); empty: `months` sets the period. It starts on `planStart` or today. */
  planStart: string;
  planEnd: string;
  freqMin: string;
  freqMax: string;
  lifecycleOn: boolean;
  lifecycle: {
    horizonMonths: string;
    ingestGibPerMonth: string;
    initialGib: string;
    start: string;
    rules: RuleRow[];
    expireAfterDays: string;
    initialReads: string;
    halfLifeMonths: string;
    search: boolean;
  };
  hybridOn: boolean;
  hybrid: { name: string; parts: HybridRow[] };
  /** Scenario keys the form has no fields for (measured charges, price overrides): kept as they are. */
  extra: Partial<ScenarioBody>;
}

/** The case study: 633 GiB in 1,000 objects in AWS Tokyo (2018), read once a month inside the region. */
export const DEFAULT_FORM: FormState = {
  catalog: "aws-ap-northeast-1-2018",
  tiers: ["STANDARD", "STANDARD_IA", "GLACIER@standard", "GLACIER@bulk"],
  volume: "633",
  volumeUnit: "GiB",
  objects: "1000",
  readsPerMonth: "1",
  readPercent: "100",
  restoreSpeed: "standard",
  restoredCopyDays: "1",
  egress: "same-region",
  egressPercent: "100",
  months: "12",
  writesPerMonth: "0",
  earlyDeletionPercent: "0",
  earlyDeletionAgeDays: "0",
  fixedCosts: [],
  readAmplification: "1",
  requestsPer: "hour",
  requestsGet: "0",
  requestsHead: "0",
  requestsPut: "0",
  requestsList: "0",
  oneOff: { initialUpload: true, transitionIn: false, deleteAtEnd: false },
  planStart: "",
  planEnd: "",
  freqMin: "0.01",
  freqMax: "100",
  lifecycleOn: false,
  lifecycle: {
    horizonMonths: "36",
    ingestGibPerMonth: "100",
    initialGib: "0",
    start: "STANDARD",
    rules: [
      { afterDays: "30", to: "STANDARD_IA" },
      { afterDays: "120", to: "GLACIER@bulk" },
    ],
    expireAfterDays: "",
    initialReads: "2",
    halfLifeMonths: "2",
    search: true,
  },
  hybridOn: false,
  hybrid: {
    name: "On-premises + IA + archive",
    parts: [
      {
        tier: "onprem-example-2026:DISK",
        dataPercent: "10",
        readPercent: "70",
      },
      { tier: "STANDARD_IA", dataPercent: "30", readPercent: "25" },
      { tier: "GLACIER@bulk", dataPercent: "60", readPercent: "5" },
    ],
  },
  extra: {},
};

type TierRefBody = ScenarioBody["tiers"][number];

/** `catalog-id:CLASS@speed` as the API's tier reference, labelled with the same text; `tier:NAME@speed`
 * (an installation tier) labelled with the tier's name. */
export function tierRef(text: string): TierRefBody {
  const mine = /^tier:([A-Za-z0-9][A-Za-z0-9._-]*)(?:@([a-z]+))?$/.exec(text.trim());
  if (mine) {
    const [, name, speed] = mine;
    return {
      tier: name ?? null,
      restore_speed: (speed as Speed | undefined) ?? null,
      label: speed ? `${name}@${speed}` : (name ?? text),
    };
  }
  const match = /^(?:([a-z0-9][a-z0-9-]*):)?([A-Z0-9][A-Z0-9_]*)(?:@([a-z]+))?$/.exec(text.trim());
  if (!match) return { storage_class: text, label: text };
  const [, catalog, storageClass, speed] = match;
  return {
    storage_class: storageClass ?? text,
    catalog: catalog ?? null,
    restore_speed: (speed as Speed | undefined) ?? null,
    label: text,
  };
}

/** The reference text of an API tier reference (the inverse of tierRef). */
export function tierText(ref: TierRefBody): string {
  if (ref.tier) return ref.restore_speed ? `tier:${ref.tier}@${ref.restore_speed}` : `tier:${ref.tier}`;
  const cls = ref.storage_class ?? "";
  const base = ref.catalog ? `${ref.catalog}:${cls}` : cls;
  return ref.restore_speed ? `${base}@${ref.restore_speed}` : base;
}

export type FormErrors = Partial<Record<string, string>>;

function num(
  errors: FormErrors,
  field: string,
  value: string,
  opts: {
    min?: number;
    max?: number;
    positive?: boolean;
    integer?: boolean;
  } = {},
): number {
  const trimmed = value.trim();
  const n = Number(trimmed);
  if (trimmed === "" || !Number.isFinite(n)) {
    errors[field] = "Enter a number";
  } else if (opts.positive && n <= 0) {
    errors[field] = "Must be more than 0";
  } else if (opts.min !== undefined && n < opts.min) {
    errors[field] = `At least ${opts.min}`;
  } else if (opts.max !== undefined && n > opts.max) {
    errors[field] = `At most ${opts.max}`;
  } else if (opts.integer && !Number.isInteger(n)) {
    errors[field] = "A whole number";
  }
  return n;
}

/** The scenario the API evaluates, or the fields to fix first. */
export function toScenario(form: FormState): {
  body: ScenarioBody | null;
  errors: FormErrors;
} {
  const errors: FormErrors = {};
  const volume = num(errors, "volume", form.volume, { min: 0 }) * VOLUME_UNITS[form.volumeUnit];
  const objects = num(errors, "objects", form.objects, { min: 0 });
  if (!errors.objects && !errors.volume && volume > 0 && objects <= 0) errors.objects = "Must be more than 0";
  const reads = num(errors, "readsPerMonth", form.readsPerMonth, {
    min: 0,
    max: 1_000_000,
  });
  const readPercent = num(errors, "readPercent", form.readPercent, {
    positive: true,
    max: 100,
  });
  const copyDays = num(errors, "restoredCopyDays", form.restoredCopyDays, {
    min: 0,
    max: 3650,
  });
  const egressPercent = num(errors, "egressPercent", form.egressPercent, {
    min: 0,
    max: 100,
  });
  const months = num(errors, "months", form.months, {
    min: 1,
    max: 1200,
    integer: true,
  });
  const writes = num(errors, "writesPerMonth", form.writesPerMonth, { min: 0 });
  const earlyPercent = num(errors, "earlyDeletionPercent", form.earlyDeletionPercent, { min: 0, max: 100 });
  const earlyAge = num(errors, "earlyDeletionAgeDays", form.earlyDeletionAgeDays, { min: 0 });
  const freqMin = num(errors, "freqMin", form.freqMin, { positive: true });
  const freqMax = num(errors, "freqMax", form.freqMax, {
    positive: true,
    max: 1_000_000,
  });
  if (!errors.freqMin && !errors.freqMax && freqMin >= freqMax)
    errors.freqMax = "Must be above the lower end";
  if (form.tiers.length === 0) errors.tiers = "Pick at least one tier";
  const amplification = num(errors, "readAmplification", form.readAmplification, { min: 1, max: 1000 });
  const count = (key: string, value: string) => num(errors, key, value, { min: 0, integer: true });
  const raw = {
    per: form.requestsPer,
    get: count("requestsGet", form.requestsGet),
    head: count("requestsHead", form.requestsHead),
    put: count("requestsPut", form.requestsPut),
    list: count("requestsList", form.requestsList),
    copy: 0,
    post: 0,
  };
  const anyRaw = raw.get + raw.head + raw.put + raw.list > 0;
  const planEnd = form.planEnd.trim();
  const planStart = form.planStart.trim() || new Date().toISOString().slice(0, 10);
  if (planEnd && !/^\d{4}-\d{2}-\d{2}$/.test(planEnd)) errors.planEnd = "A date (YYYY-MM-DD)";
  else if (planEnd && planEnd <= planStart) errors.planEnd = "Must come after the plan's start";
  const fixed = form.fixedCosts
    .filter((row) => row.name.trim() || row.monthly.trim())
    .map((row, i) => {
      if (!row.name.trim()) errors[`fixed.${i}.name`] = "Name the cost";
      return {
        name: row.name.trim(),
        monthly: num(errors, `fixed.${i}.monthly`, row.monthly, { min: 0 }),
      };
    });

  let lifecycle: ScenarioBody["lifecycle"] = null;
  if (form.lifecycleOn) {
    const lc = form.lifecycle;
    const rules = lc.rules
      .filter((r) => r.afterDays.trim() !== "" && r.to)
      .map((r, i) => ({
        after_days: num(errors, `lifecycle.rules.${i}`, r.afterDays, {
          min: 0,
          integer: true,
        }),
        to: r.to,
      }));
    rules.forEach((r, i) => {
      const prev = rules[i - 1];
      if (prev && r.after_days <= prev.after_days)
        errors[`lifecycle.rules.${i}`] = "Must come after the rule above";
    });
    const expire = lc.expireAfterDays.trim()
      ? num(errors, "lifecycle.expireAfterDays", lc.expireAfterDays, {
          min: 1,
          integer: true,
        })
      : null;
    lifecycle = {
      horizon_months: num(errors, "lifecycle.horizonMonths", lc.horizonMonths, {
        min: 1,
        max: 240,
        integer: true,
      }),
      ingest_gib_per_month: num(errors, "lifecycle.ingestGibPerMonth", lc.ingestGibPerMonth, { min: 0 }),
      initial_gib: num(errors, "lifecycle.initialGib", lc.initialGib, {
        min: 0,
      }),
      start: lc.start || null,
      rules,
      expire_after_days: expire,
      decay: {
        kind: "exponential",
        initial_reads_per_month: num(errors, "lifecycle.initialReads", lc.initialReads, { min: 0 }),
        half_life_months: num(errors, "lifecycle.halfLifeMonths", lc.halfLifeMonths, { positive: true }),
        floor: 0,
        table: [],
      },
      search: lc.search,
      search_step_days: 30,
    };
  }

  let hybrid: ScenarioBody["hybrid"] = [];
  if (form.hybridOn) {
    const parts = form.hybrid.parts
      .filter((p) => p.tier)
      .map((p, i) => ({
        tier: p.tier,
        data_share: num(errors, `hybrid.${i}.data`, p.dataPercent, { min: 0, max: 100 }) / 100,
        read_share: num(errors, `hybrid.${i}.read`, p.readPercent, { min: 0, max: 100 }) / 100,
      }));
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    if (Math.abs(sum(parts.map((p) => p.data_share)) - 1) > 1e-6)
      errors["hybrid.data"] = "Data shares must add up to 100 %";
    if (Math.abs(sum(parts.map((p) => p.read_share)) - 1) > 1e-6)
      errors["hybrid.read"] = "Read shares must add up to 100 %";
    hybrid = [{ name: form.hybrid.name.trim() || "Hybrid plan", by: "share", parts }];
  }

  if (Object.keys(errors).length > 0) return { body: null, errors };
  const body: ScenarioBody = {
    ...form.extra,
    catalog: form.catalog,
    tiers: form.tiers.map(tierRef),
    volume_gib: volume,
    objects,
    reads_per_month: reads,
    read_fraction: readPercent / 100,
    restore_speed: form.restoreSpeed,
    restored_copy_days: copyDays,
    egress: form.egress,
    egress_share: egressPercent / 100,
    months,
    writes_per_month: writes,
    read_amplification: amplification,
    requests: anyRaw ? raw : null,
    one_off: {
      initial_upload: form.oneOff.initialUpload,
      transition_in: form.oneOff.transitionIn,
      delete_at_end: form.oneOff.deleteAtEnd,
    },
    plan_start: planEnd ? planStart : null,
    plan_end: planEnd || null,
    early_deletion: earlyPercent > 0 ? { share_per_month: earlyPercent / 100, age_days: earlyAge } : null,
    fixed_costs: fixed.map((f) => ({ ...f, tiers: null })),
    frequency_range: { min: freqMin, max: freqMax, points: 200 },
    lifecycle,
    hybrid,
  };
  return { body, errors };
}

/** A volume in GiB as the form shows it: in the largest unit that keeps it at least 1 and its digits short
 * (204800 → 200 TiB); a volume with more digits than that stays in GiB, exactly as the scenario holds it. */
export function volumeIn(gib: number): { volume: string; unit: VolumeUnit } {
  const units = Object.keys(VOLUME_UNITS) as VolumeUnit[];
  for (const unit of units.reverse()) {
    // powers of two divide exactly: the text times the unit gives back the very same GiB
    const value = gib / VOLUME_UNITS[unit];
    const text = String(value);
    if (value >= 1 && !/e|\.\d{4,}/.test(text)) return { volume: text, unit };
  }
  return { volume: String(gib), unit: "GiB" };
}

const str = (v: unknown, fallback = ""): string => (v === null || v === undefined ? fallback : String(v));
const pct = (v: unknown, fallback: string): string =>
  v === null || v === undefined ? fallback : String(Math.round(Number(v) * 100 * 1e6) / 1e6);

/** The form showing a saved scenario; keys without fields are carried in `extra`. */
export function fromScenario(body: Partial<ScenarioBody>): FormState {
  const {
    catalog,
    tiers,
    volume_gib,
    objects,
    reads_per_month,
    read_fraction,
    restore_speed,
    restored_copy_days,
    egress,
    egress_share,
    months,
    writes_per_month,
    early_deletion,
    fixed_costs,
    frequency_range,
    lifecycle,
    hybrid,
    mean_object_size_mib,
    size_histogram,
    read_amplification,
    requests,
    one_off,
    plan_start,
    plan_end,
    ...extra
  } = body;
  let objectCount = objects;
  if (objectCount == null && mean_object_size_mib != null && volume_gib != null) {
    objectCount = Math.round((Number(volume_gib) * 1024) / Number(mean_object_size_mib));
  }
  let volume = volume_gib;
  if (size_histogram && size_histogram.length > 0) {
    const count = size_histogram.reduce((a, b) => a + Number(b.count), 0);
    const bytes = size_histogram.reduce((a, b) => a + Number(b.size_bytes) * Number(b.count), 0);
    objectCount = objectCount ?? count;
    volume = volume ?? bytes / 1024 ** 3;
  }
  const d = DEFAULT_FORM;
  const plan = hybrid?.[0];
  const typed = volume == null ? null : volumeIn(Number(volume));
  return {
    catalog: catalog ?? d.catalog,
    tiers: tiers ? tiers.map((t) => (typeof t === "string" ? t : tierText(t))) : d.tiers,
    volume: typed ? typed.volume : d.volume,
    volumeUnit: typed ? typed.unit : d.volumeUnit,
    objects: str(objectCount, d.objects),
    readsPerMonth: str(reads_per_month, d.readsPerMonth),
    readPercent: pct(read_fraction, d.readPercent),
    restoreSpeed: restore_speed ?? d.restoreSpeed,
    restoredCopyDays: str(restored_copy_days, d.restoredCopyDays),
    egress: egress ?? d.egress,
    egressPercent: pct(egress_share, d.egressPercent),
    months: str(months, d.months),
    writesPerMonth: str(writes_per_month, d.writesPerMonth),
    earlyDeletionPercent: pct(early_deletion?.share_per_month, "0"),
    earlyDeletionAgeDays: str(early_deletion?.age_days, "0"),
    fixedCosts: (fixed_costs ?? []).map((f) => ({
      name: f.name,
      monthly: str(f.monthly),
    })),
    readAmplification: str(read_amplification, d.readAmplification),
    requestsPer: requests?.per ?? d.requestsPer,
    requestsGet: str(requests?.get, "0"),
    requestsHead: str(requests?.head, "0"),
    requestsPut: str(requests?.put, "0"),
    requestsList: str(requests?.list, "0"),
    oneOff: {
      initialUpload: one_off?.initial_upload ?? d.oneOff.initialUpload,
      transitionIn: one_off?.transition_in ?? d.oneOff.transitionIn,
      deleteAtEnd: one_off?.delete_at_end ?? d.oneOff.deleteAtEnd,
    },
    planStart: plan_start ?? "",
    planEnd: plan_end ?? "",
    freqMin: str(frequency_range?.min, d.freqMin),
    freqMax: str(frequency_range?.max, d.freqMax),
    lifecycleOn: lifecycle != null,
    lifecycle: lifecycle
      ? {
          horizonMonths: str(lifecycle.horizon_months),
          ingestGibPerMonth: Array.isArray(lifecycle.ingest_gib_per_month)
            ? str(lifecycle.ingest_gib_per_month[0], "0")
            : str(lifecycle.ingest_gib_per_month),
          initialGib: str(lifecycle.initial_gib),
          start: lifecycle.start ?? "",
          rules: (lifecycle.rules ?? []).map((r) => ({
            afterDays: str(r.after_days),
            to: r.to,
          })),
          expireAfterDays: str(lifecycle.expire_after_days),
          initialReads: str(lifecycle.decay?.initial_reads_per_month, d.lifecycle.initialReads),
          halfLifeMonths: str(lifecycle.decay?.half_life_months, d.lifecycle.halfLifeMonths),
          search: lifecycle.search ?? true,
        }
      : d.lifecycle,
    hybridOn: plan != null,
    hybrid: plan
      ? {
          name: plan.name,
          parts: plan.parts.map((p) => ({
            tier: p.tier,
            dataPercent: pct(p.data_share, "0"),
            readPercent: pct(p.read_share ?? p.data_share, "0"),
          })),
        }
      : d.hybrid,
    extra,
  };
}

/** The form "From my data" fills: the measured scenario, with the installation's tiers the user had ticked still
 * ticked (a `tier:NAME@speed` choice too) and no lifecycle or hybrid what-ifs switched on. */
export function prefilledForm(current: FormState, measured: Partial<ScenarioBody>): FormState {
  const next = fromScenario(measured);
  const own = current.tiers.filter((t) => t.startsWith("tier:") && !next.tiers.includes(t));
  return { ...next, tiers: [...own, ...next.tiers], lifecycleOn: false, hybridOn: false };
}

/** A catalog as the catalog dropdown names it: provider, region and the date its prices were valid. */
export function catalogLabel(c: Pick<CatalogSummary, "provider" | "region" | "valid_from">): string {
  return `${c.provider.toUpperCase()} ${c.region} (${c.valid_from})`;
}

/** A tier reference with its catalog named as the dropdown names it (`catalog-id:CLASS@speed` → `CLASS@speed, AWS …`). */
export function tierRefLabel(ref: string, catalogs: readonly CatalogSummary[]): string {
  const m = /^([a-z0-9][a-z0-9-]*):(.+)$/.exec(ref);
  if (!m || ref.startsWith("tier:")) return ref;
  const [, id, rest] = m;
  const known = catalogs.find((c) => c.id === id);
  return known ? `${rest}, ${catalogLabel(known)}` : ref;
}

/** The form a new planner opens on: the installation's priceable tiers, priced with the newest catalog of the
 * provider and region their price references name (else the newest catalog of all). */
export function installationStart(
  form: FormState,
  mine: readonly InstallationTier[],
  catalogs: readonly CatalogSummary[],
): FormState {
  const priceable = mine.filter((t) => t.priceable);
  const newest = (list: readonly CatalogSummary[]) =>
    [...list].sort((a, b) => (a.valid_from < b.valid_from ? 1 : a.valid_from > b.valid_from ? -1 : 0))[0];
  const referenced = priceable.map((t) => t.catalog).find((c): c is string => Boolean(c));
  const base = referenced?.replace(/-\d{4}$/, "");
  const sameRegion = base ? catalogs.filter((c) => c.id === base || c.id.startsWith(`${base}-`)) : [];
  const current = newest(sameRegion.length ? sameRegion : catalogs.filter((c) => c.provider !== "onprem"));
  return {
    ...form,
    catalog: current?.id ?? form.catalog,
    tiers: priceable.length ? priceable.map((t) => t.ref) : form.tiers,
    egress: priceable.length ? "internet" : form.egress,
  };
}
