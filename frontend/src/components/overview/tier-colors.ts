const PALETTE = ["#2563eb", "#0d9488", "#7c3aed", "#d97706", "#db2777", "#4b5563"] as const;

/** A stable colour per tier name, the same on every chart of the dashboard. */
export function tierColorMap(tierNames: readonly string[]): Map<string, string> {
  return new Map(tierNames.map((name, i) => [name, PALETTE[i % PALETTE.length] as string]));
}
