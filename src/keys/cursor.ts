// Opaque cursors for GET /customer/keys: "list the keys created before this one". The position is
// created_at to the microsecond with the key id breaking ties (a rotation makes two keys in one
// transaction). A cursor only ever narrows the caller's own keys, so it needs no signature.
const POSITION = /^k(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)\|(key_[0-9A-Za-z]{22})$/;

export function encodeKeyCursor(position: string, keyId: string): string {
  return Buffer.from(`k${position}|${keyId}`, "utf8").toString("base64url");
}

/** The position a cursor stands for, or undefined when it is not one of ours. */
export function decodeKeyCursor(cursor: string): { at: string; keyId: string } | undefined {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(cursor)) return undefined;
  const match = POSITION.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match || Number.isNaN(Date.parse(match[1]!)) || encodeKeyCursor(match[1]!, match[2]!) !== cursor) return undefined;
  return { at: match[1]!, keyId: match[2]! };
}
