import { canonicalize } from "json-canonicalize";

// Hashes and signatures cover bytes, so every party must serialise a value the same way:
// RFC 8785 (JCS) fixes key order (UTF-16 code units), number format and string escaping.
export function canonicalJson(value: unknown): string {
  // canonicalize() would emit the non-JSON text "undefined" here rather than fail.
  if (value === undefined) throw new TypeError("canonicalJson: undefined is not JSON");
  return flatScalarsJson(value) ?? canonicalize(value);
}

/**
 * The JCS text of a plain object whose values are all strings, null or safe integers (what every
 * signature covers), or undefined for anything else. JCS serialises those exactly as
 * JSON.stringify does (an integer as its decimal digits, -0 as 0) and orders keys by UTF-16 code
 * units, as Array.prototype.sort does; this skips json-canonicalize's general walk on the hot
 * path. A property test checks both agree.
 */
export function flatScalarsJson(value: unknown): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) return undefined;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const v = record[keys[i]];
    if (!(typeof v === "string" || v === null || Number.isSafeInteger(v))) return undefined;
    out += (i === 0 ? "" : ",") + JSON.stringify(keys[i]) + ":" + JSON.stringify(v);
  }
  return out + "}";
}

const utf8 = new TextEncoder();

export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? utf8.encode(data) : data;
  // Copy into a plain ArrayBuffer-backed view: digest() refuses SharedArrayBuffer views.
  const digest = await crypto.subtle.digest("SHA-256", new Uint8Array(bytes));
  return bytesToHex(new Uint8Array(digest));
}

// Same payload, same hash, whatever the key order or the server that built it.
export async function contentHash(payload: unknown): Promise<string> {
  return sha256Hex(canonicalJson(payload));
}

export function bytesToHex(bytes: Uint8Array): string {
  let hex = "0x";
  for (const b of bytes) hex += b.toString(16).padStart(2, "0");
  return hex;
}

export function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const digits = hex.startsWith("0x") ? hex.slice(2) : hex;
  // Reject rather than guess: a silently truncated hash would compare unequal much later.
  if (digits.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(digits)) {
    throw new TypeError("hexToBytes: expected an even number of hex digits");
  }
  const out = new Uint8Array(digits.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(digits.slice(2 * i, 2 * i + 2), 16);
  return out;
}
