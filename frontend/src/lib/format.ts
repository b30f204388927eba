// Stored volume is shown in binary units (GiB, TiB) as cloud bills count it; throughput elsewhere
// uses MB/s = 10^6 B/s. Keep both conventions in this one module so labels never disagree.

const BINARY_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"] as const;

/** Bytes in binary units with three significant digits: 1536 → "1.50 KiB". */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes == null || !Number.isFinite(bytes)) return "—";
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BINARY_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${BINARY_UNITS[unit]}`;
}

const countFormat = new Intl.NumberFormat("en-US");

/** An integer count with thousands separators. */
export function formatCount(n: number | null | undefined): string {
  return n == null ? "—" : countFormat.format(n);
}

/**
 * A share 0…1 as a percentage with the precision small shares need: 0.5 → "50 %", 0.035 → "3.5 %",
 * 0.0012 → "0.12 %"; only a share below 0.01 % is "<0.01 %", so tiers with little data still differ.
 */
export function formatPercent(share: number): string {
  if (!Number.isFinite(share)) return "—";
  const pct = share * 100;
  if (pct === 0) return "0 %";
  if (pct > 0 && pct < 0.01) return "<0.01 %";
  const digits = pct >= 10 ? 0 : pct >= 1 ? 1 : 2;
  return `${Number(pct.toFixed(digits))} %`;
}

/** A count with its noun, singular for one: (1, "object") → "1 object", (1200, "object") → "1,200 objects". */
export function formatCountOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${formatCount(n)} ${n === 1 ? noun : plural}`;
}

/** A throughput in MB/s (10^6 bytes/s), the same everywhere: 600 → "600 MB/s", 12.5 → "12.5 MB/s". */
export function formatRate(mbps: number | null | undefined): string {
  if (mbps == null || !Number.isFinite(mbps)) return "—";
  const digits = mbps >= 100 ? 0 : mbps >= 10 ? 1 : 2;
  return `${countFormat.format(Number(mbps.toFixed(digits)))} MB/s`;
}

const usdFormat = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });
const usdUnitFormat = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  maximumSignificantDigits: 3,
});

/**
 * US dollars, the one way money prints: cents from a cent up (1124.19 → "$1,124.19"); below a cent three
 * significant digits instead of "$0.00" (0.0042 → "$0.0042"). With a unit, a unit price: below a dollar it
 * keeps three significant digits, as price lists do (0.01123046875, "GiB-month" → "$0.0112/GiB-month").
 */
export function formatMoney(usd: number | null | undefined, unit?: string): string {
  if (usd == null || !Number.isFinite(usd)) return "—";
  const abs = Math.abs(usd);
  const small = unit ? abs < 1 : abs < 0.01;
  const text = abs > 0 && small ? usdUnitFormat.format(usd) : usdFormat.format(usd);
  return unit ? `${text}/${unit}` : text;
}

const GIB = 1024 ** 3;
const sizeFormat = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });

export type SizeUnit = (typeof BINARY_UNITS)[number];

/**
 * A size in binary units with thousands separators and one decimal at most, in the largest unit that keeps
 * the number at least 1 (204800 GiB → "200 TiB"), or in the unit asked for (10 TiB in "GiB" → "10,240 GiB").
 */
export function formatSize(bytes: number | null | undefined, unit?: SizeUnit): string {
  if (bytes == null || !Number.isFinite(bytes)) return "—";
  let index = unit ? BINARY_UNITS.indexOf(unit) : 0;
  if (!unit) {
    while (Math.abs(bytes) >= 1024 ** (index + 1) && index < BINARY_UNITS.length - 1) index += 1;
  }
  const value = bytes / 1024 ** index;
  // a non-zero size never rounds to "0": it shows its first significant digits instead
  const text =
    value !== 0 && Math.abs(value) < 0.05 ? String(Number(value.toPrecision(2))) : sizeFormat.format(value);
  return `${text} ${BINARY_UNITS[index]}`;
}

/** GiB (the planner's and the bills' unit) as a size: formatGib(204800) → "200 TiB". */
export function formatGib(gib: number | null | undefined, unit?: SizeUnit): string {
  return gib == null ? "—" : formatSize(gib * GIB, unit);
}

/** The used share of a capacity, or null when the capacity is unknown or zero. */
export function usedShare(used: number, capacity: number | null | undefined): number | null {
  if (!capacity || capacity <= 0) return null;
  return Math.min(1, Math.max(0, used / capacity));
}

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const zonedFormat = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "numeric",
  minute: "2-digit",
  timeZoneName: "short",
});

/**
 * A UTC timestamp from the API in the user's locale and local time; `withZone` names the zone where
 * the reader might otherwise assume UTC or the server's time (schedules, bookings, sweeps).
 */
export function formatDateTime(iso: string | null | undefined, withZone = false): string {
  if (!iso) return "—";
  // The API speaks UTC; a timestamp without a zone is UTC too, not the browser's local time.
  const hasZone = /(Z|[+-]\d\d:?\d\d)$/.test(iso);
  const d = new Date(hasZone || !iso.includes("T") ? iso : `${iso}Z`);
  if (Number.isNaN(d.getTime())) return "—";
  return (withZone ? zonedFormat : dateTimeFormat).format(d);
}

/** A duration in seconds as the largest sensible unit: 5 → "5 s", 5400 → "1.5 h". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "—";
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${trim(seconds / 60)} min`;
  if (seconds < 86400) return `${trim(seconds / 3600)} h`;
  return `${trim(seconds / 86400)} d`;
}

function trim(value: number): string {
  return value >= 10 ? value.toFixed(0) : value.toFixed(1).replace(/\.0$/, "");
}

/** The binary unit that keeps a chart's largest value readable: its divisor and label. */
export function chartByteUnit(maxBytes: number): { divisor: number; label: string } {
  let unit = 0;
  let value = maxBytes;
  while (value >= 1024 && unit < BINARY_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return { divisor: 1024 ** unit, label: BINARY_UNITS[unit] ?? "B" };
}
