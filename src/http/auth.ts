// Who is calling: a customer with a JWT, or a bot with an API key (spec section 5).
import type { Session } from "../accounts/sessions.ts";
import { authenticateKey, type AppendingFeature, type KeyPrincipal } from "../keys/authenticate.ts";
import type { Deps } from "./deps.ts";
import { DbError } from "../db/index.ts";
import { assertVerdict } from "../plans/features.ts";
import { AppError } from "./errors.ts";
import { requestState } from "./request-state.ts";

export type Principal = (KeyPrincipal & { via: "key" }) | (Session & { via: "jwt" });

function bearerToken(request: Request): string | undefined {
  const header = request.headers.get("authorization");
  if (!header) return undefined;
  const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header.trim());
  if (!match) throw new AppError("unauthorized");
  return match[1];
}

export async function requireCustomer(deps: Deps, request: Request): Promise<Session> {
  const token = bearerToken(request);
  if (!token) throw new AppError("unauthorized", "Send Authorization: Bearer <token>.");
  return deps.sessions.authenticate(token);
}

// Only the header counts: a key in a query string would end up in proxy and browser logs.
export async function requireKey(deps: Deps, request: Request): Promise<KeyPrincipal> {
  const secret = request.headers.get("x-api-key");
  if (!secret) throw new AppError("unauthorized", "Send X-API-Key: <key>.");
  return authenticateKey(deps.db, secret.trim());
}

/**
 * For protect and execute: the key as requireKey reads it, or on PostgreSQL a hint that the
 * request's own append checks (src/keys/authenticate.ts), one round trip instead of two. A request
 * with an Idempotency-Key takes no hint: its claim is written before the append. A hint that no
 * append confirmed is looked up by the front door before any answer leaves (src/http/app.ts), so
 * an unknown or revoked key still gets its 401 ahead of every other answer.
 */
export async function requireKeyToAppend(deps: Deps, request: Request, feature: AppendingFeature): Promise<KeyPrincipal> {
  const secret = request.headers.get("x-api-key");
  if (!secret || request.headers.has("idempotency-key")) return requireKey(deps, request);
  const principal = await authenticateKey(deps.db, secret.trim(), feature);
  if (principal.hint) requestState(request).keyCheck = { hint: principal.hint, confirm: () => requireKey(deps, request) };
  return principal;
}

/**
 * Runs a protect or execute under its principal. When the principal was a hint and the append
 * answered WR006 (something the key's context depends on changed since the hint was read; nothing
 * was stored), the key is read now, its refusal if any is the answer, and the call runs again
 * under what was read.
 */
export async function withKeyChecked<T>(deps: Deps, request: Request, principal: KeyPrincipal, feature: AppendingFeature, run: (principal: KeyPrincipal) => Promise<T>): Promise<T> {
  try {
    return await run(principal);
  } catch (err) {
    if (!principal.hint || !(err instanceof DbError && err.sqlstate === "WR006")) throw err;
    let read: KeyPrincipal;
    try {
      read = await requireKey(deps, request);
    } finally {
      // Read now, for this request: its refusal, if any, is the answer.
      principal.hint.confirmed = true;
    }
    assertVerdict(feature, read.features[feature]);
    return run(read);
  }
}

/** Either credential; an API key wins when both are sent. */
export async function requireKeyOrCustomer(deps: Deps, request: Request): Promise<Principal> {
  if (request.headers.has("x-api-key")) return { ...(await requireKey(deps, request)), via: "key" };
  if (request.headers.has("authorization")) return { ...(await requireCustomer(deps, request)), via: "jwt" };
  throw new AppError("unauthorized", "Send X-API-Key: <key> or Authorization: Bearer <token>.");
}
