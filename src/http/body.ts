// Request bodies: JSON only, at most 64 KiB, strict UTF-8, Unicode text in every string
// (docs/api.md, the introduction).
import { AppError } from "./errors.ts";

export const MAX_BODY_BYTES = 64 * 1024;
/**
 * Deepest nesting of arrays and objects a body may have. Our deepest schema (a whole result sent
 * to /v1/verify) needs 6; a 64 KiB body of brackets would otherwise cost seconds and a 500 in the
 * validator, which pretty-prints the value it refuses (quadratic in the depth).
 */
export const MAX_JSON_DEPTH = 32;
/**
 * JSON text that is valid UTF-8 can hold a lone UTF-16 surrogate only as an escape (`\ud800`);
 * text without one needs no walk over the parsed value. An escaped backslash before `u` matches
 * too, which costs only the walk.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** A surrogate code unit that is not half of a pair (`u` makes a pair one code point). */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;
const JSON_TYPE = /^application\/json\s*(;|$)/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Checks the headers before anything is read: declared size (on every method: a GET carrying a
 * large body gets the same 413 as a POST) and, where a body is expected, the content type (415,
 * or what `wrongType` answers instead for the route).
 */
export function checkBodyHeaders(
  request: Request,
  wrongType: (request: Request) => AppError | undefined = () => undefined,
  takesForm: (request: Request) => boolean = () => false,
): void {
  const length = request.headers.get("content-length");
  if (length !== null && Number(length) > MAX_BODY_BYTES) throw new AppError("payload_too_large");
  if (!BODY_METHODS.has(request.method)) return;
  // A declared length decides; without one, a chunked or in-process body still counts.
  const hasBody = length !== null ? length !== "0" : request.headers.has("transfer-encoding") || request.body !== null;
  if (!hasBody || JSON_TYPE.test(request.headers.get("content-type") ?? "")) return;
  if (isFormBody(request) && takesForm(request)) return;
  throw wrongType(request) ?? new AppError("unsupported_media_type");
}

/** Whether the body is declared application/x-www-form-urlencoded (taken only where checkBodyHeaders allowed it). */
export function isFormBody(request: Request): boolean {
  return FORM_TYPE.test(request.headers.get("content-type") ?? "");
}

/**
 * A form body (OAuth's token endpoints) as an object: a name sent once maps to its string, a name
 * sent more than once to all its values (the route refuses those). Same size cap and UTF-8 rule as JSON.
 */
export async function readFormBody(request: Request): Promise<Record<string, string | string[]>> {
  const out: Record<string, string | string[]> = Object.create(null);
  if (!request.body) return out;
  const bytes = hasCheckedLength(request) ? new Uint8Array(await request.arrayBuffer()) : await readCapped(request.body);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new AppError("invalid_request", "The request body is not valid UTF-8.");
  }
  for (const [name, value] of new URLSearchParams(text)) {
    if (LONE_SURROGATE.test(name) || LONE_SURROGATE.test(value) || name.includes("\u0000") || value.includes("\u0000")) {
      throw new AppError("invalid_request", "The form holds a character that is not Unicode text.");
    }
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

/**
 * Reads and parses the body, stopping at the size limit even when no length was declared.
 * An empty body reads as null (never undefined, which would hand it to another parser).
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  if (!request.body) return null;
  const bytes = hasCheckedLength(request) ? new Uint8Array(await request.arrayBuffer()) : await readCapped(request.body);
  if (bytes.byteLength === 0) return null;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new AppError("invalid_json", "The request body is not valid UTF-8.");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AppError("invalid_json");
  }
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw new AppError("invalid_request", `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
  if (SURROGATE_ESCAPE.test(text)) {
    const where = loneSurrogatePath(parsed, "body");
    if (where !== undefined) throw new AppError("invalid_request", `${where}: a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair) is not Unicode text.`);
  }
  return parsed;
}

/**
 * Whether the request declares a Content-Length within the limit (checkBodyHeaders refused larger
 * ones). HTTP framing then ends the body at that many bytes, so reading it whole is safe and much
 * cheaper than pulling the stream chunk by chunk.
 */
function hasCheckedLength(request: Request): boolean {
  const length = request.headers.get("content-length");
  return length !== null && /^\d+$/.test(length) && Number(length) <= MAX_BODY_BYTES;
}

/** Reads a body of unknown length, stopping at the size limit. */
async function readCapped(body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw new AppError("payload_too_large");
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.byteLength;
  }
  return bytes;
}

/** The deepest nesting of `[` and `{` in JSON text, brackets inside strings not counted. One pass. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * The path (`body/a/0/b`, as validation errors name one) of the first string or property name
 * holding a lone surrogate, or undefined when there is none. I-JSON (RFC 7493), which JCS (RFC
 * 8785) hashes, has none, and PostgreSQL's jsonb refuses one: it would reach the database and
 * fail there. The depth is bounded by MAX_JSON_DEPTH, checked first.
 */
export function loneSurrogatePath(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return LONE_SURROGATE.test(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = loneSurrogatePath(value[i], `${path}/${i}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  for (const [key, item] of Object.entries(value)) {
    // The property named with U+FFFD in place of its lone surrogates: an answer never echoes one.
    if (LONE_SURROGATE.test(key)) return `${path}/${key.replace(LONE_SURROGATES, "\ufffd")}`;
    const found = loneSurrogatePath(item, `${path}/${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}
