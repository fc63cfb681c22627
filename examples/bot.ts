// A bot's whole round trip with warden, in plain TypeScript over fetch: sign up, make a key for
// the bot, ask before acting (protect), act and record it (execute), then check both results
// offline against the JWKS with `jose` and `canonicalize`. docs/bot-example.md walks through it.
//
//   WARDEN_URL=https://127.0.0.1:8443 NODE_TLS_REJECT_UNAUTHORIZED=0 bun examples/bot.ts
//   WARDEN_URL=https://127.0.0.1:8443 deno run --allow-net --allow-env \
//     --unsafely-ignore-certificate-errors=127.0.0.1 examples/bot.ts
//
// (The TLS switches only for the self-signed development certificate.)
import canonicalize from "canonicalize";
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from "jose";

const BASE = (process.env.WARDEN_URL ?? "https://127.0.0.1:8443").replace(/\/+$/, "");

class WardenError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly body: Record<string, unknown>) {
    super(`${status} ${code}: ${message}`);
  }
}

/** One call; a non-2xx answer becomes a WardenError carrying its error code (docs/api.md, Error codes). */
async function call<T = any>(method: string, path: string, opts: { body?: unknown; token?: string; apiKey?: string; idempotencyKey?: string } = {}): Promise<T> {
  const headers: Record<string, string> = {};
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.apiKey) headers["x-api-key"] = opts.apiKey;
  // Safe to retry: the same key and body within 24 h get the first answer again, not a second decision.
  if (opts.idempotencyKey) headers["idempotency-key"] = opts.idempotencyKey;
  const response = await fetch(BASE + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const body = (await response.json()) as Record<string, any>;
  if (!response.ok) throw new WardenError(response.status, body.error, body.message, body);
  return body as T;
}

// ---- offline verification: needs only the JWKS, fetched once and kept ----------------------

const sha256Hex = async (text: string) =>
  "0x" + [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))].map((b) => b.toString(16).padStart(2, "0")).join("");

/** The claims a result's signature covers, besides `v: 2`; every result shows them all. */
const CLAIMS = ["receipt_id", "tenant_id", "key_id", "kind", "request_id", "timestamp", "content_hash", "protect_receipt_id"] as const;

/**
 * A result is genuine when its content_hash is the SHA-256 of the canonical (RFC 8785) payload,
 * the decision and kind shown are the ones hashed, and the Ed25519 signature from the JWKS covers
 * exactly {v: 2, ...CLAIMS} of this result, by a key that was not compromised at its timestamp.
 */
async function verifyOffline(result: Record<string, any>, jwks: JSONWebKeySet): Promise<boolean> {
  if (result.decision !== result.payload?.decision || result.kind !== result.payload?.kind) return false;
  if ((await sha256Hex(canonicalize(result.payload)!)) !== result.content_hash) return false;
  try {
    const { payload, protectedHeader } = await compactVerify(result.signature, createLocalJWKSet(jwks), { algorithms: ["EdDSA"] });
    // A key revoked as compromised vouches only for what it signed before `compromised_since`.
    const key = jwks.keys.find((k) => k.kid === protectedHeader.kid) as { compromised_since?: string } | undefined;
    if (key?.compromised_since !== undefined && !(Date.parse(result.timestamp) < Date.parse(key.compromised_since))) return false;
    const signed = JSON.parse(new TextDecoder().decode(payload));
    const expected = { v: 2, ...Object.fromEntries(CLAIMS.map((claim) => [claim, result[claim]])) };
    return canonicalize(signed) === canonicalize(expected);
  } catch {
    return false; // bad signature, unknown kid, malformed token
  }
}

// ---- the bot --------------------------------------------------------------------------------

// 1. An account (once, by a person), and a key of the bot's own, so it can be revoked alone.
const email = process.env.BOT_EMAIL ?? `bot.${Date.now()}@example.com`;
const account = await call("POST", "/auth/signup", { body: { email, password: process.env.BOT_PASSWORD ?? "a long and unguessable passphrase" } });
const key = await call("POST", "/customer/keys", { token: account.token, body: { label: "payments-bot" }, idempotencyKey: crypto.randomUUID() });
console.log(`tenant ${account.tenant_id}, bot key ${key.key_id} (secret shown once: store it in the bot's secret store)`);

// 2. Before acting: ask. The answer is a signed receipt, stored in the tenant's log.
async function protect(input: Record<string, unknown>) {
  return call("POST", "/v1/protect", { apiKey: key.secret, body: input, idempotencyKey: crypto.randomUUID() });
}
const large = await protect({ action: "payment.send", resource: "vendor/acme", amount: 5000, currency: "USD" });
console.log(`large payment: ${large.decision} (${large.reasons.join("; ")})`);
const small = await protect({ action: "payment.send", resource: "vendor/acme", amount: 250, currency: "USD" });
console.log(`small payment: ${small.decision}, receipt ${small.receipt_id}`);

// 3. Act only on ALLOWED, then record the execution against that receipt (once, within 15 minutes).
let executed: Record<string, any> | undefined;
if (small.decision === "ALLOWED") {
  // ... the bot sends the payment here ...
  executed = await call<Record<string, any>>("POST", "/v1/execute", { apiKey: key.secret, body: { receipt_id: small.receipt_id }, idempotencyKey: crypto.randomUUID() });
  console.log(`executed: ${executed.executed}, receipt ${executed.receipt_id} (seq ${executed.seq})`);
  try {
    await call("POST", "/v1/execute", { apiKey: key.secret, body: { receipt_id: small.receipt_id } });
  } catch (err) {
    console.log(`second execute refused: ${(err as WardenError).code}`);
  }
}
if (large.decision === "DENIED") {
  try {
    await call("POST", "/v1/execute", { apiKey: key.secret, body: { receipt_id: large.receipt_id } });
  } catch (err) {
    console.log(`execute of the denied decision refused: ${(err as WardenError).code}`);
  }
}

// 4. Anyone holding a result can check it later without warden's help, with the public keys only.
const jwks = await call<JSONWebKeySet>("GET", "/.well-known/jwks.json");
const marked = (since: string) => ({ keys: jwks.keys.map((k) => ({ ...k, compromised_since: since })) });
const checks = {
  large: await verifyOffline(large, jwks),
  small: await verifyOffline(small, jwks),
  executed: executed ? await verifyOffline(executed, jwks) : false,
  // A result whose decision was edited afterwards must fail...
  tampered: await verifyOffline({ ...large, decision: "ALLOWED", payload: { ...large.payload, decision: "ALLOWED" } }, jwks),
  // ...and so must one with any signed claim changed,
  claim_tampered: (await Promise.all(CLAIMS.map((claim) => verifyOffline({ ...small, [claim]: `${small[claim]}x` }, jwks)))).some(Boolean),
  // ...and one signed by a key the JWKS marks compromised at or before its timestamp; earlier ones still hold.
  signed_after_compromise: await verifyOffline(small, marked(small.timestamp)),
  signed_before_compromise: await verifyOffline(small, marked(new Date(Date.parse(small.timestamp) + 1).toISOString())),
};
const ok = checks.large && checks.small && checks.executed && !checks.tampered && !checks.claim_tampered && !checks.signed_after_compromise && checks.signed_before_compromise;
console.log(JSON.stringify({ ok, verified: checks }));
process.exit(ok ? 0 : 1);
