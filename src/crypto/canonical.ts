import { canonicalize } from "json-canonicalize";

// Hashes and signatures cover bytes, so every party must serialise a value the same way:
// RFC 8785 (JCS) fixes key order (UTF-16 code units), number format and string escaping.
export function canonicalJson(value: unknown): string {
  // canonicalize() would emit the non-JSON text "undefined" here rather than fail.
  if (value === undefined) throw new TypeError("canonicalJson: undefined is not JSON");
  return flatScalarsJson(value) ?? plainJson(value) ?? canonicalize(value);
}

/**
 * The JCS text of a plain JSON value (null, booleans, finite numbers, strings, arrays and plain
 * objects of them; an object's undefined members left out and an array's written as null, as
 * JSON.stringify does), or undefined for anything else (a Date, a toJSON, a non-finite number, a
 * key that is an array index), which json-canonicalize serialises. JCS's numbers and strings are
 * ECMAScript's, that is JSON.stringify's, and its keys sort by UTF-16 code units, as
 * Array.prototype.sort does: so a copy with every object's keys inserted in that order, written by
 * the engine's own JSON.stringify, is the JCS text, in a third of the library's time for a payload
 * (docs/decisions.md, "Canonical JSON"). Only what is out of order is copied: an object or array
 * whose members are all in order already is written as it is. An array-index key would be written
 * first whatever its place, hence the library for those. test/crypto/canonical.test.ts holds this
 * to the library and to an independent implementation on arbitrary values.
 */
export function plainJson(value: unknown): string | undefined {
  const copy = sortedCopy(value, 0);
  return copy === NOT_PLAIN ? undefined : JSON.stringify(copy);
}

const NOT_PLAIN = Symbol("not plain JSON");
const ARRAY_INDEX = /^(0|[1-9][0-9]{0,9})$/;

/**
 * value with every object's keys in sorted order: value itself when they all are (most objects
 * warden signs are built in order), else a copy of the parts that are not; NOT_PLAIN for a value
 * JSON.stringify would not write as JCS.
 */
function sortedCopy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "undefined":
      return value;
    case "number":
      return Number.isFinite(value) ? value : NOT_PLAIN;
    case "object": {
      if (value === null) return null;
      // Deeper than any value warden signs: perhaps a cycle, which the library names as one.
      if (depth > 64) return NOT_PLAIN;
      if (Array.isArray(value)) {
        let out: unknown[] | undefined;
        for (let i = 0; i < value.length; i++) {
          const item = sortedCopy(value[i], depth + 1);
          if (item === NOT_PLAIN) return NOT_PLAIN;
          if (item !== value[i]) (out ??= value.slice(0, i)).push(item);
          else out?.push(item);
        }
        return out ?? value;
      }
      const proto = Object.getPrototypeOf(value);
      const record = value as Record<string, unknown>;
      if ((proto !== Object.prototype && proto !== null) || typeof record.toJSON === "function") return NOT_PLAIN;
      const keys = Object.keys(record);
      let sorted = true;
      let plainKeys = true;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        if (i > 0 && keys[i - 1]! > key) sorted = false;
        const first = key.charCodeAt(0);
        if (first >= 48 && first <= 57 && ARRAY_INDEX.test(key) && Number(key) < 2 ** 32 - 1) return NOT_PLAIN;
        if (key === "__proto__") plainKeys = false;
      }
      // The members as written: allocated only once one differs from the object's own, or the
      // keys need sorting.
      let members: unknown[] | undefined = sorted ? undefined : new Array<unknown>(keys.length);
      for (let i = 0; i < keys.length; i++) {
        const own = record[keys[i]!];
        const member = sortedCopy(own, depth + 1);
        if (member === NOT_PLAIN) return NOT_PLAIN;
        if (members !== undefined) members[i] = member;
        else if (member !== own) {
          members = new Array<unknown>(keys.length);
          for (let j = 0; j < i; j++) members[j] = record[keys[j]!];
          members[i] = member;
        }
      }
      // In order, and every member as it is: the object itself (JSON.stringify writes an own
      // "__proto__" member as any other).
      if (members === undefined) return value;
      // No prototype when a key is "__proto__": it is then a member like any other. Otherwise an
      // ordinary object, which the engine's JSON.stringify writes fastest.
      const out: Record<string, unknown> = plainKeys ? {} : Object.create(null);
      if (sorted) for (let i = 0; i < keys.length; i++) out[keys[i]!] = members[i];
      else {
        const order = Array.from(keys.keys()).sort((a, b) => (keys[a]! < keys[b]! ? -1 : 1));
        for (const i of order) out[keys[i]!] = members[i];
      }
      return out;
    }
    default:
      return NOT_PLAIN;
  }
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
