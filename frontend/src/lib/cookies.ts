/** The value of a readable cookie, or null when absent. */
export function readCookie(name: string, source: string = document.cookie): string | null {
  for (const part of source.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return null;
}
