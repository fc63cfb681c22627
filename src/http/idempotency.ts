// Idempotency-Key (docs/api.md, the introduction): the first response to a POST is stored in the database
// and replayed, byte for byte, to a retry with the same key and the same request for 24 hours.
//
//   return withIdempotency(deps, request, tenantId, body, async () => ({ status: 201, body: {...}, headers? }));
//
// Without the header the operation simply runs. Which responses are stored: every 2xx and every
// 4xx the operation itself answers (404, 409 already_executed, 403 decision_denied, ...), so a
// retry sees the same verdict; not 429 (a quota frees up or rises) and not 5xx (transient): those
// release the key so that a retry runs again.
//
// Some responses hold a key secret (key create, rotate), and no secret may be readable from the
// database, its backups or logs: the record names the Idempotency-Key only by its hash, and the
// body is sealed with AES-GCM under a key derived (HKDF) from the Idempotency-Key value, which
// only the caller holds. Records expire after 24 hours: a claim ignores older ones, and the
// sweeper (startIdempotencySweeper, run by the service) deletes them.
import { canonicalJson } from "../crypto/canonical.ts";
import { sha256HexSync, sha256PlainHexSync } from "../crypto/sync.ts";
import type { Queryable } from "../db/index.ts";
import type { Logger } from "../log.ts";
import { AppError, errorBody, toAppError } from "./errors.ts";
import { requestId } from "./request-state.ts";

export interface Outcome {
  status: number;
  body: unknown;
  /** Headers that belong to the response (and its replays), e.g. RateLimit-*. */
  headers?: Record<string, string>;
}

const HEADER = "idempotency-key";

function storable(status: number): boolean {
  return status >= 200 && status < 500 && status !== 429;
}

/** Same key with another method, path or body is a mismatch; JCS makes key order irrelevant. */
export async function requestFingerprint(method: string, path: string, body: unknown): Promise<string> {
  const bodyHash = sha256HexSync(canonicalJson(body ?? null));
  return sha256HexSync(`${method.toUpperCase()} ${path} ${bodyHash}`).slice(2);
}

function respond(outcome: { status: number; text: string; headers: Record<string, string> }, replayed = false): Response {
  const headers = new Headers(outcome.headers);
  if (replayed) headers.set("idempotent-replayed", "true");
  return new Response(outcome.text, { status: outcome.status, headers });
}

function serialise(outcome: Outcome): { status: number; text: string; headers: Record<string, string> } {
  return { status: outcome.status, text: JSON.stringify(outcome.body), headers: { "content-type": "application/json", ...outcome.headers } };
}

/** What idempotency needs of the service. */
type Deps = { db: Queryable; log: Logger };

const utf8 = (text: string) => new TextEncoder().encode(text);

/** How a record names its Idempotency-Key: a hash, domain-separated from the sealing key's derivation. */
export function idempotencyKeyHash(key: string): string {
  return sha256PlainHexSync(`warden idempotency-key\u0000${key}`);
}

/** The AES-GCM key of one record: HKDF-SHA-256 of the Idempotency-Key value, salted with the tenant. */
async function sealingKey(key: string, tenantId: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", utf8(key), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: utf8(tenantId), info: utf8("warden idempotency response v1") },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** The record's identity and status are authenticated with the body: a sealed body moved to another record fails to open. */
const sealContext = (tenantId: string, keyHash: string, status: number) => utf8(`${tenantId} ${keyHash} ${status}`);

/** base64 of nonce ‖ ciphertext ‖ tag. */
export async function sealResponse(key: string, tenantId: string, status: number, text: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const additionalData = sealContext(tenantId, idempotencyKeyHash(key), status);
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData }, await sealingKey(key, tenantId), utf8(text)));
  const out = new Uint8Array(iv.length + sealed.length);
  out.set(iv);
  out.set(sealed, iv.length);
  return Buffer.from(out).toString("base64");
}

export async function openResponse(key: string, tenantId: string, status: number, sealed: string): Promise<string> {
  const bytes = Buffer.from(sealed, "base64");
  const additionalData = sealContext(tenantId, idempotencyKeyHash(key), status);
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.subarray(0, 12), additionalData }, await sealingKey(key, tenantId), bytes.subarray(12));
  return new TextDecoder().decode(plain);
}

export async function withIdempotency(deps: Deps, request: Request, tenantId: string, body: unknown, run: () => Promise<Outcome>): Promise<Response> {
  const key = request.headers.get(HEADER);
  if (key === null) return respond(serialise(await run()));
  if (key.length < 1 || key.length > 255) throw new AppError("invalid_request", "Idempotency-Key must be 1 to 255 characters.");

  const fingerprint = await requestFingerprint(request.method, new URL(request.url).pathname, body);
  const keyHash = idempotencyKeyHash(key);
  const claim = await deps.db.one("idempotency/claim", [tenantId, keyHash, fingerprint]);
  switch (claim?.outcome) {
    case "claimed":
      break;
    case "completed": {
      const text = await openResponse(key, tenantId, claim.response_status!, claim.response_sealed!);
      return respond({ status: claim.response_status!, text, headers: claim.response_headers as Record<string, string> }, true);
    }
    case "mismatch":
      throw new AppError("idempotency_mismatch", "This Idempotency-Key was used with a different request.");
    case "in_progress":
      throw new AppError("idempotency_in_progress", "A request with this Idempotency-Key is still running; retry shortly.");
    default:
      throw new Error(`idempotency_claim answered ${claim?.outcome}`);
  }

  let outcome: Outcome;
  try {
    outcome = await run();
  } catch (err) {
    const { error, unexpected } = toAppError(err);
    if (unexpected || !storable(error.status)) {
      await release(deps, tenantId, keyHash);
      throw err;
    }
    outcome = { status: error.status, body: errorBody(error, requestId(request)), headers: error.options.headers };
  }
  const response = serialise(outcome);
  if (!storable(response.status)) {
    await release(deps, tenantId, keyHash);
    return respond(response);
  }
  try {
    const sealed = await sealResponse(key, tenantId, response.status, response.text);
    await deps.db.query("idempotency/complete", [tenantId, keyHash, response.status, response.headers, sealed]);
  } catch (err) {
    // The operation happened; the caller gets its answer. The key stays in progress until it expires.
    deps.log.warn("idempotency_store_failed", { request_id: requestId(request), error: String(err) });
  }
  return respond(response);
}

async function release(deps: Deps, tenantId: string, keyHash: string): Promise<void> {
  try {
    await deps.db.query("idempotency/release", [tenantId, keyHash]);
  } catch (err) {
    deps.log.warn("idempotency_release_failed", { error: String(err) });
  }
}

/** Deletes every record 24 hours old or more, in batches; answers how many went. */
export async function sweepIdempotency(db: Queryable, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = (await db.one("idempotency/sweep", [batch]))?.deleted ?? 0;
    total += deleted;
    if (deleted < batch) return total;
  }
}

/** Sweeps at start and then every `everyMs`; stop() waits for a sweep in progress. */
export function startIdempotencySweeper(deps: Deps, everyMs: number): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const sweep = () => {
    running = sweepIdempotency(deps.db).catch((err) => deps.log.warn("idempotency_sweep_failed", { error: String(err) }));
  };
  sweep();
  const timer = setInterval(sweep, everyMs);
  // A timer alone never keeps the process up.
  (timer as { unref?: () => void }).unref?.();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
