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

/** A share 0…1 as a percentage; small non-zero shares stay visible ("<1 %"). */
export function formatPercent(share: number): string {
  if (!Number.isFinite(share)) return "—";
  if (share > 0 && share < 0.01) return "<1 %";
  return `${Math.round(share * 100)} %`;
}

/** The used share of a capacity, or null when the capacity is unknown or zero. */
export function usedShare(used: number, capacity: number | null | undefined): number | null {
  if (!capacity || capacity <= 0) return null;
  return Math.min(1, Math.max(0, used / capacity));
}

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/** A UTC timestamp from the API shown in the browser's local time. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  // The API speaks UTC; a timestamp without a zone is UTC too, not the browser's local time.
  const hasZone = /(Z|[+-]\d\d:?\d\d)$/.test(iso);
  const d = new Date(hasZone || !iso.includes("T") ? iso : `${iso}Z`);
  return Number.isNaN(d.getTime()) ? "—" : dateTimeFormat.format(d);
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
