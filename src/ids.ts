// Identifiers and secrets: a prefix plus base62 of CSPRNG bytes (docs/api.md, the introduction).
export const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` base62 characters, each drawn without modulo bias. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      // 248 = 4 * 62: bytes at or above it would favour the first characters.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** 22 base62 characters carry 130.9 bits, above the 128 of ASVS 11.5.1 (docs/security.md). */
export function newId(prefix: "cust_" | "acct_" | "mbr_" | "inv_" | "key_" | "upgr_" | "req_" | "rcpt_" | "apv_" | "whk_" | "gw_" | "grt_" | "cli_"): string {
  return prefix + randomBase62(22);
}

/** Fixed-width base62 of a non-negative integer. */
export function toBase62(n: number, width: number): string {
  let out = "";
  for (let v = n; v > 0; v = Math.floor(v / 62)) out = BASE62[v % 62] + out;
  return out.padStart(width, "0");
}

/**
 * Whether a caller's id could name a stored row. Ids we issue never hold U+0000, which PostgreSQL
 * text cannot carry, so such an id names nothing (404), like any other unknown id.
 */
export function couldNameRow(id: string): boolean {
  return !id.includes("\u0000");
}
