// Saved results with one signed claim changed: every verifier must refuse each of them.
const OTHER_RECEIPT = "rcpt_" + "Q".repeat(22);

/** [claim, a copy of result with that claim changed] for each of the eight claims a result shows. */
export function claimTampered<T extends Record<string, any>>(result: T): [string, T][] {
  const other = (value: unknown, alternative: string) => (value === alternative ? alternative + "x" : alternative);
  const changes: Record<string, unknown> = {
    receipt_id: result.receipt_id === null ? OTHER_RECEIPT : other(result.receipt_id, OTHER_RECEIPT),
    key_id: result.key_id === null ? "key_" + "K".repeat(22) : null,
    tenant_id: other(result.tenant_id, "cust_" + "T".repeat(22)),
    kind: result.kind === "protect" ? "execute" : "protect",
    protect_receipt_id: result.protect_receipt_id === null ? OTHER_RECEIPT : null,
    request_id: other(result.request_id, "req_tampered"),
    timestamp: new Date(Date.parse(result.timestamp) + 1).toISOString(),
    content_hash: "0x" + (result.content_hash === "0x" + "ab".repeat(32) ? "cd" : "ab").repeat(32),
  };
  return Object.entries(changes).map(([claim, value]) => [claim, { ...structuredClone(result), [claim]: value }]);
}

/** The signed claims of a compact JWS, decoded without checking it. */
export function signedClaims(jws: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jws.split(".")[1], "base64url").toString("utf8"));
}

/** The kid in a compact JWS's protected header. */
export function signingKid(jws: string): string {
  return JSON.parse(Buffer.from(jws.split(".")[0], "base64url").toString("utf8")).kid;
}
