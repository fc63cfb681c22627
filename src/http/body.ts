// Request bodies: JSON only, at most 64 KiB, strict UTF-8 (docs/api.md, the introduction).
import { AppError } from "./errors.ts";

export const MAX_BODY_BYTES = 64 * 1024;
/**
 * Deepest nesting of arrays and objects a body may have. Our deepest schema (a whole result sent
 * to /v1/verify) needs 6; a 64 KiB body of brackets would otherwise cost seconds and a 500 in the
 * validator, which pretty-prints the value it refuses (quadratic in the depth).
 */
export const MAX_JSON_DEPTH = 32;
const JSON_TYPE = /^application\/json\s*(;|$)/i;
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Checks the headers before anything is read: declared size (on every method: a GET carrying a
 * large body gets the same 413 as a POST) and, where a body is expected, the content type (415,
 * or what `wrongType` answers instead for the route).
 */
export function checkBodyHeaders(request: Request, wrongType: (request: Request) => AppError | undefined = () => undefined): void {
  const length = request.headers.get("content-length");
  if (length !== null && Number(length) > MAX_BODY_BYTES) throw new AppError("payload_too_large");
  if (!BODY_METHODS.has(request.method)) return;
  // A declared length decides; without one, a chunked or in-process body still counts.
  const hasBody = length !== null ? length !== "0" : request.headers.has("transfer-encoding") || request.body !== null;
  if (hasBody && !JSON_TYPE.test(request.headers.get("content-type") ?? "")) throw wrongType(request) ?? new AppError("unsupported_media_type");
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
