// Opaque cursors for GET /customer/entities: "list the entities after this (type, id)". A cursor
// only ever narrows the caller's own entities, so it needs no signature.
export function encodeEntityCursor(type: string, id: string): string {
  return Buffer.from(`e${JSON.stringify([type, id])}`, "utf8").toString("base64url");
}

/** The position a cursor stands for, or undefined when it is not one of ours. */
export function decodeEntityCursor(cursor: string): { type: string; id: string } | undefined {
  if (!/^[A-Za-z0-9_-]{1,800}$/.test(cursor)) return undefined;
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  if (!text.startsWith("e")) return undefined;
  let position: unknown;
  try {
    position = JSON.parse(text.slice(1));
  } catch {
    return undefined;
  }
  if (!Array.isArray(position) || position.length !== 2) return undefined;
  const [type, id] = position;
  const name = (v: unknown): v is string => typeof v === "string" && v.length >= 1 && v.length <= 128;
  if (!name(type) || !name(id) || encodeEntityCursor(type, id) !== cursor) return undefined;
  return { type, id };
}
