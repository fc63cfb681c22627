// Opaque pagination cursors for GET /customer/receipts: "list what comes before this seq".
// Opaque so that the listing order can change without breaking clients; a cursor only ever
// narrows the caller's own log, so it needs no signature.

export function encodeCursor(beforeSeq: number): string {
  return Buffer.from(`s${beforeSeq}`, "utf8").toString("base64url");
}

/** The seq a cursor stands for, or undefined when it is not one of ours. */
export function decodeCursor(cursor: string): number | undefined {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return undefined;
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const match = /^s(0|[1-9][0-9]{0,15})$/.exec(text);
  if (!match || encodeCursor(Number(match[1])) !== cursor) return undefined;
  const seq = Number(match[1]);
  return Number.isSafeInteger(seq) ? seq : undefined;
}
