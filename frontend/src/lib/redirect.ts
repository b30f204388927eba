/** A post-login target that stays on this site; anything else falls back to the overview. */
export function safeRedirect(target: unknown): string {
  if (typeof target !== "string") return "/";
  if (!target.startsWith("/") || target.startsWith("//") || target.startsWith("/\\")) return "/";
  if (target.startsWith("/login")) return "/";
  return target;
}
