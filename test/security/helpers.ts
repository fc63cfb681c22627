// Shared by the security suite: a real HTTPS server on the shared test database (for what only
// the wire shows: paths as sent, query strings, the peer address), the error-body check (docs/api.md, Error codes),
// median timing, and the record of every secret a test used, to scan the logs for.
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { connect as tlsConnect } from "node:tls";
import { join } from "node:path";
import type { Config } from "../../src/config.ts";
import { ERROR_STATUS } from "../../src/http/errors.ts";
import { serve } from "../../src/app/server.ts";
import { loadTls } from "../../src/http/tls.ts";
import { createLogger } from "../../src/log.ts";
import { testConfig, testService, toReply, type Reply } from "../helpers/service.ts";

export const ROOT = join(import.meta.dir, "..", "..");

// ---- a real HTTPS server --------------------------------------------------------------------

let certFiles: Promise<{ cert: string; key: string; dir: string }> | undefined;

/** One self-signed certificate per test process, in a temporary folder removed at exit. */
export function devCertificate(): Promise<{ cert: string; key: string; dir: string }> {
  certFiles ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-sec-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    await loadTls({ dataDir: dir, log: () => {} });
    return { cert: join(dir, "tls", "dev-cert.pem"), key: join(dir, "tls", "dev-key.pem"), dir };
  })();
  return certFiles;
}

export interface Wire {
  url: string;
  /** The METRICS_ADDR listener, when the overrides asked for one. */
  metricsUrl?: string;
  /** Every log line the server wrote. */
  lines: string[];
  stop(): Promise<void>;
}

/**
 * `serve()` on 127.0.0.1 and a free port, over HTTPS, on the shared test database. DATA_DIR stays
 * in memory, so this instance delivers no mail (other tests' outbox rows are left alone).
 */
export async function startWire(overrides: Partial<Config> = {}, now?: () => Date): Promise<Wire> {
  const { db } = await testService();
  const { cert, key } = await devCertificate();
  const lines: string[] = [];
  const config = testConfig({ port: 0, host: "127.0.0.1", tlsCert: cert, tlsKey: key, ...overrides });
  const started = await serve(config, { db, log: createLogger("info", (l) => lines.push(l)), now });
  return { url: started.url, metricsUrl: started.metricsUrl, lines, stop: started.stop };
}

const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

/** One request over the wire. The path is sent as written (`//auth/login` stays so). */
export async function wire(base: string, method: string, path: string, opts: { json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["content-type"] ??= "application/json";
  }
  return toReply(await fetch(base + path, { ...insecure, method, headers, body }));
}

/**
 * One HTTP/1.1 request written byte for byte over TLS (fetch would normalise `//auth/login` to
 * `/auth/login` before sending it). The connection closes after the answer.
 */
export function rawWire(base: string, method: string, path: string, opts: { json?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
  const { hostname, port } = new URL(base);
  const body = opts.json === undefined ? "" : JSON.stringify(opts.json);
  const headers: Record<string, string> = { host: hostname, connection: "close", ...(body ? { "content-type": "application/json" } : {}), ...opts.headers };
  const head = [`${method} ${path} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `content-length: ${Buffer.byteLength(body)}`].join("\r\n");
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = tlsConnect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => socket.write(`${head}\r\n\r\n${body}`));
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      const [status, ...lines] = text.slice(0, split).split("\r\n");
      const responseHeaders = new Headers(lines.map((l) => [l.slice(0, l.indexOf(":")).trim(), l.slice(l.indexOf(":") + 1).trim()] as [string, string]));
      let payload = text.slice(split + 4);
      if (responseHeaders.get("transfer-encoding") === "chunked") payload = dechunk(payload);
      let parsed: unknown;
      try {
        parsed = JSON.parse(payload);
      } catch {
        parsed = undefined;
      }
      resolve({ status: Number(status.split(" ")[1]), headers: responseHeaders, body: parsed, text: payload });
    });
  });
}

function dechunk(text: string): string {
  let out = "";
  for (let at = 0; ; ) {
    const eol = text.indexOf("\r\n", at);
    const size = parseInt(text.slice(at, eol), 16);
    if (!size) return out;
    out += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

// ---- error bodies ---------------------------------------------------------------------------

// What must never reach a client: stack frames, source paths, SQL, driver or engine names.
const LEAKS: [string, RegExp][] = [
  ["a stack frame", /\bat [\w.<>$]+ \(|\n\s+at /],
  ["a source path", /\.(ts|js|mjs):\d+|\/src\/|node_modules/],
  ["SQL text", /\b(SELECT|INSERT|UPDATE|DELETE)\b[\s\S]*\b(FROM|INTO|SET|WHERE)\b|\bsyntax error\b|\bSQLSTATE\b|\brelation "/],
  ["a database detail", /\b(postgres|pglite|sqlstate|constraint|duplicate key|violates)\b/i],
  ["an engine error", /\b(TypeError|RangeError|ReferenceError|SyntaxError|DbError)\b/],
];

/** Returns a description of what is wrong with an error reply, or undefined when it is clean. */
export function errorProblem(reply: { status: number; headers: Headers; body: any; text: string }): string | undefined {
  const b = reply.body;
  if (!b || typeof b !== "object") return "the error body is not JSON";
  // The OAuth endpoints (register, token, revoke) answer RFC 6749's body, which OAuth clients
  // read (docs/api.md, "OAuth for agents"): {error, error_description, request_id}, no `ok`.
  if (!("ok" in b) && typeof b.error_description === "string") return oauthErrorProblem(reply);
  if (b.ok !== false) return "ok is not false";
  if (typeof b.error !== "string" || !(b.error in ERROR_STATUS)) return `error ${JSON.stringify(b.error)} is not in the vocabulary of docs/api.md`;
  // token_expired is 400 for links and 401 for a JWT; every other code has one status.
  const status = ERROR_STATUS[b.error as keyof typeof ERROR_STATUS];
  if (status !== reply.status && !(b.error === "token_expired" && reply.status === 401)) return `${b.error} came with status ${reply.status}, not ${status}`;
  if (typeof b.message !== "string" || b.message.length === 0) return "no message";
  if (typeof b.request_id !== "string" || b.request_id !== reply.headers.get("x-request-id")) return "request_id missing or not the X-Request-ID header";
  // A validation message names the failing path, which may be the caller's own property name:
  // only the part after it is ours.
  const ours = b.error === "invalid_request" ? b.message.slice(b.message.lastIndexOf(": ") + 1) : b.message;
  const text = JSON.stringify({ ...b, message: ours, request_id: undefined });
  for (const [what, pattern] of LEAKS) if (pattern.test(text)) return `the body shows ${what}`;
  return undefined;
}

/** RFC 6749 section 5.2 and RFC 7591 section 3.2.2 error codes, with the status each comes with here. */
const OAUTH_ERROR_STATUS: Record<string, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
};

function oauthErrorProblem(reply: { status: number; headers: Headers; body: any }): string | undefined {
  const b = reply.body;
  if (typeof b.error !== "string" || !(b.error in OAUTH_ERROR_STATUS)) return `OAuth error ${JSON.stringify(b.error)} is not RFC 6749's or RFC 7591's`;
  if (OAUTH_ERROR_STATUS[b.error] !== reply.status) return `${b.error} came with status ${reply.status}, not ${OAUTH_ERROR_STATUS[b.error]}`;
  if (b.error_description.length === 0) return "no error_description";
  if (typeof b.request_id !== "string" || b.request_id !== reply.headers.get("x-request-id")) return "request_id missing or not the X-Request-ID header";
  if (reply.headers.get("cache-control") !== "no-store") return "an OAuth error without Cache-Control: no-store";
  const text = JSON.stringify({ ...b, request_id: undefined });
  for (const [what, pattern] of LEAKS) if (pattern.test(text)) return `the body shows ${what}`;
  return undefined;
}

export function expectCleanError(reply: { status: number; headers: Headers; body: any; text: string }, status?: number, error?: string): void {
  const problem = errorProblem(reply);
  if (problem) throw new Error(`${problem}: ${reply.status} ${reply.text.slice(0, 300)}`);
  if (status !== undefined) expect(reply.status).toBe(status);
  if (error !== undefined) expect(reply.body.error).toBe(error);
}

// ---- timing ---------------------------------------------------------------------------------

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Times `count` calls of each of two variants, interleaved (order alternating) after a short
 * warm-up, and returns both medians in ms and the replies for comparison.
 */
export async function timePair<T>(count: number, a: () => Promise<T>, b: () => Promise<T>) {
  for (let i = 0; i < 3; i++) await Promise.all([a(), b()]);
  const times = { a: [] as number[], b: [] as number[] };
  const replies = { a: [] as T[], b: [] as T[] };
  const one = async (side: "a" | "b") => {
    const started = performance.now();
    replies[side].push(await (side === "a" ? a() : b()));
    times[side].push(performance.now() - started);
  };
  for (let i = 0; i < count; i++) {
    if (i % 2) {
      await one("a");
      await one("b");
    } else {
      await one("b");
      await one("a");
    }
  }
  return { a: median(times.a), b: median(times.b), replies };
}

/** Fails unless two medians are within `ms`; says what they were either way (for CI logs). */
export function expectMediansWithin(name: string, timed: { a: number; b: number }, ms: number): void {
  console.log(`timing ${name}: medians ${timed.a.toFixed(2)} ms and ${timed.b.toFixed(2)} ms`);
  expect(Math.abs(timed.a - timed.b)).toBeLessThan(ms);
}

/** A reply without the parts that differ per request by design. */
export function comparable(reply: Reply) {
  const { request_id: _, ...body } = (reply.body ?? {}) as Record<string, unknown>;
  const headers = [...reply.headers.keys()].filter((h) => !["x-request-id", "date", "content-length"].includes(h)).sort();
  return { status: reply.status, body, headers };
}

// ---- secrets and logs -----------------------------------------------------------------------

/** Every password, token, JWT and key a security test used; scanned for in the logs. */
export const secretsUsed = new Set<string>();

export function remember<T extends string | undefined>(secret: T): T {
  if (secret && secret.length >= 8) secretsUsed.add(secret);
  return secret;
}

/** Throws naming the first log line that carries any remembered secret. */
export function expectNoSecretIn(lines: readonly string[], secrets: Iterable<string> = secretsUsed): void {
  const list = [...secrets];
  expect(list.length).toBeGreaterThan(0);
  for (const line of lines) {
    for (const secret of list) {
      if (line.includes(secret)) throw new Error(`a log line carries a secret (${secret.slice(0, 6)}…): ${line.slice(0, 300)}`);
    }
  }
}
