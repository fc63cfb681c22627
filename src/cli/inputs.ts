// Files the CLI reads (results, bundles, JWKS, policies): found where the caller stands, and named
// for what they are when they are not what a command takes.
import { readFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { readStdin } from "../runtime.ts";

/** A refusal the CLI explains in one line on stderr, with its exit status (1 a failure, 2 bad input). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

/**
 * A path as the caller meant it: `npm run cli` runs in the package's folder, and npm names the
 * folder it was called from in INIT_CWD (only trusted while npm runs this very script).
 */
export function callerPath(file: string): string {
  const event = process.env.npm_lifecycle_event;
  const from = process.env.INIT_CWD;
  if (file === "-" || isAbsolute(file) || !from || (event !== "cli" && event !== "cli:deno")) return file;
  return resolve(from, file);
}

/** The JSON in a file (`-`: stdin); exit 2 when it cannot be read or is not JSON. */
export async function readJsonInput(file: string): Promise<unknown> {
  let text: string;
  try {
    text = file === "-" ? await readStdin() : await readFile(callerPath(file), "utf8");
  } catch (err) {
    throw new CliError(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, 2);
  }
  const name = file === "-" ? "stdin" : file;
  if (text.trim() === "") throw new CliError(`${name} is empty (did the command that wrote it fail?)`, 2);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${name} is not JSON (${(err as Error).message})`, 2);
  }
}

type Fields = Record<string, unknown>;
const isObject = (v: unknown): v is Fields => v !== null && typeof v === "object" && !Array.isArray(v);

/** The service's error body, in a line: `unauthorized: Missing API key. (request_id req_...)`. */
export function describeErrorBody(body: Fields): string {
  const id = typeof body.request_id === "string" ? ` (request_id ${body.request_id})` : "";
  return `${String(body.error)}${typeof body.message === "string" ? `: ${body.message}` : ""}${id}`;
}

/** What a value that is not a result is, for `warden verify`; undefined for something shaped like a result. */
export function notAResult(value: unknown): string | undefined {
  if (!isObject(value)) return `not a warden result: it is JSON ${Array.isArray(value) ? "array" : value === null ? "null" : typeof value}, not an object`;
  if (value.ok === false && typeof value.error === "string") return `not a warden result but an error the service answered: ${describeErrorBody(value)}`;
  if (isObject(value.receipt) && isObject(value.proof) && isObject(value.checkpoint)) return "not a warden result but a proof bundle: check it with verify --proof";
  // One of them missing is a damaged result: the checks say which part fails.
  if (!("payload" in value) && !("content_hash" in value) && !("signature" in value)) return "not a warden result: it has no payload, content_hash or signature";
  return undefined;
}

/** What a value that is not a proof bundle is, for `warden verify --proof`; undefined for a bundle. */
export function notABundle(value: unknown): string | undefined {
  if (!isObject(value)) return `not a proof bundle: it is JSON ${Array.isArray(value) ? "array" : value === null ? "null" : typeof value}, not an object`;
  if (value.ok === false && typeof value.error === "string") return `not a proof bundle but an error the service answered: ${describeErrorBody(value)}`;
  const missing = ["receipt", "proof", "checkpoint"].filter((field) => !isObject(value[field]));
  if (missing.length === 3 && "payload" in value && "signature" in value) {
    return "not a proof bundle but a single result: check it with verify FILE, or make its bundle with warden proof FILE";
  }
  if (missing.length) return `not a proof bundle {receipt, proof, checkpoint}: it has no ${missing.join(", no ")}`;
  return undefined;
}
