// Idempotency-Key (contract section 3): the first response to a POST is stored in the database
// and replayed, byte for byte, to a retry with the same key and the same request for 24 hours.
//
//   return withIdempotency(deps, request, tenantId, body, async () => ({ status: 201, body: {...}, headers? }));
//
// Without the header the operation simply runs. Which responses are stored: every 2xx and every
// 4xx the operation itself answers (404, 409 already_executed, 403 decision_denied, ...), so a
// retry sees the same verdict; not 429 (a quota frees up or rises) and not 5xx (transient): those
// release the key so that a retry runs again.
import { canonicalJson } from "../crypto/canonical.ts";
import { sha256HexSync } from "../crypto/sync.ts";
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

export async function withIdempotency(deps: Deps, request: Request, tenantId: string, body: unknown, run: () => Promise<Outcome>): Promise<Response> {
  const key = request.headers.get(HEADER);
  if (key === null) return respond(serialise(await run()));
  if (key.length < 1 || key.length > 255) throw new AppError("invalid_request", "Idempotency-Key must be 1 to 255 characters.");

  const fingerprint = await requestFingerprint(request.method, new URL(request.url).pathname, body);
  const claim = await deps.db.one("idempotency/claim", [tenantId, key, fingerprint]);
  switch (claim?.outcome) {
    case "claimed":
      break;
    case "completed":
      return respond({ status: claim.response_status!, text: claim.response_body!, headers: claim.response_headers as Record<string, string> }, true);
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
      await release(deps, tenantId, key);
      throw err;
    }
    outcome = { status: error.status, body: errorBody(error, requestId(request)), headers: error.options.headers };
  }
  const response = serialise(outcome);
  if (!storable(response.status)) {
    await release(deps, tenantId, key);
    return respond(response);
  }
  try {
    await deps.db.query("idempotency/complete", [tenantId, key, response.status, response.headers, response.text]);
  } catch (err) {
    // The operation happened; the caller gets its answer. The key stays in progress until it expires.
    deps.log.warn("idempotency_store_failed", { request_id: requestId(request), error: String(err) });
  }
  return respond(response);
}

async function release(deps: Deps, tenantId: string, key: string): Promise<void> {
  try {
    await deps.db.query("idempotency/release", [tenantId, key]);
  } catch (err) {
    deps.log.warn("idempotency_release_failed", { error: String(err) });
  }
}
