/** A bucket another user shares with the viewer: only what the sharing grants is offered (the API decides each
 * request the same way; this only spares the viewer buttons that would be refused). */
export interface SharedRights {
  owner: string;
  write: boolean;
  delete: boolean;
}

/** "read only", or what the viewer may do besides reading. */
export function rightsText(rights: { write: boolean; delete: boolean }): string {
  const more = [...(rights.write ? ["upload"] : []), ...(rights.delete ? ["delete"] : [])];
  return more.length ? `you may read, ${more.join(" and ")}` : "read only";
}
