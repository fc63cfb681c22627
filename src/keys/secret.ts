// API key secrets: `warden_live_` + 32 base62 + `_` + 6 base62 of the CRC-32 of what precedes
// (docs/api.md, API keys). The checksum lets secret scanners spot a key and lets the server refuse
// a mistyped one before touching the database.
import { randomBase62, toBase62 } from "../ids.ts";
import { sha256PlainHexSync } from "../crypto/sync.ts";

export const SECRET_PREFIX = "warden_live_";
const SHAPE = /^warden_live_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}$/;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3, as zlib) of an ASCII string. */
export function crc32(text: string): number {
  let c = 0xffffffff;
  for (let i = 0; i < text.length; i++) c = CRC_TABLE[(c ^ text.charCodeAt(i)) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function checksum(body: string): string {
  return toBase62(crc32(body), 6);
}

export function newSecret(): string {
  const body = SECRET_PREFIX + randomBase62(32);
  return `${body}_${checksum(body)}`;
}

/** Shape and checksum only: a true answer says nothing about whether the key exists. */
export function isWellFormedSecret(secret: string): boolean {
  return SHAPE.test(secret) && checksum(secret.slice(0, -7)) === secret.slice(-6);
}

export function secretHint(secret: string): string {
  return secret.slice(-4);
}

/** Lowercase hex SHA-256, the only form in which a secret is stored. */
export async function hashSecret(secret: string): Promise<string> {
  return sha256PlainHexSync(secret);
}
