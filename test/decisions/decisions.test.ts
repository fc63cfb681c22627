// POST /v1/protect, /v1/execute and /v1/verify as a bot calls them: results, receipts, every
// error of docs/api.md for them, quotas and their headers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import canonicalizeReference from "canonicalize";
import { createHash } from "node:crypto";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { verifyResult } from "../../src/receipts/verify.ts";
import { claimTampered, signedClaims } from "../helpers/claims.ts";
import { apiKey, bearer, execute, LARGE_PAYMENT, logHead, protect, setPlan, setUsage, SMALL_PAYMENT } from "../helpers/customer.ts";
import { call, expectErrorShape, signup, testConfig, testService } from "../helpers/service.ts";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HASH = /^0x[0-9a-f]{64}$/;
const RESULT_FIELDS = ["chain_hash", "content_hash", "decision", "key_id", "kind", "ok", "payload", "prev_hash", "protect_receipt_id", "reasons", "receipt_id", "request_id", "seq", "signature", "tenant_id", "timestamp", "verified"];

const independentHash = (payload: unknown) => "0x" + createHash("sha256").update(canonicalizeReference(payload) as string, "utf8").digest("hex");
const verify = (secret: string, json: unknown) => call("POST", "/v1/verify", { json, headers: apiKey(secret) });
const usage = async (tenantId: string) => (await (await testService()).db.one("receipts/usage_summary", [tenantId, null]))!;

async function jwks() {
  return (await call("GET", "/.well-known/jwks.json")).body as { keys: JsonWebKey[] };
}

/** A service whose clock runs `offsetMs` from now, on the same database. */
async function serviceAt(offsetMs: number): Promise<Service> {
  const { db } = await testService();
  return createService(testConfig(), { db, log: createLogger("silent"), now: () => new Date(Date.now() + offsetMs) });
}

describe("POST /v1/protect", () => {
  test("200: a decision result stored as the log's next receipts (seq 1, 2, ... after the signup's event) with RateLimit headers", async () => {
    const a = await signup();
    const head = await logHead(a.token);
    expect(head.size).toBe(1); // the signup's key.created event
    const first = await protect(a.apiKey, SMALL_PAYMENT, { headers: { "x-request-id": "bot-call-1" } });
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(RESULT_FIELDS);
    expect(first.body).toMatchObject({ ok: true, verified: false, kind: "protect", decision: "ALLOWED", reasons: ["payment_within_limit"], request_id: "bot-call-1", tenant_id: a.tenantId, seq: head.size, prev_hash: head.last, protect_receipt_id: null });
    expect(first.body.receipt_id).toMatch(/^rcpt_[0-9A-Za-z]{22}$/);
    expect(first.body.timestamp).toMatch(ISO);
    expect(first.body.chain_hash).toMatch(HASH);
    expect(first.body.payload).toEqual({ v: 2, kind: "protect", input: SMALL_PAYMENT, policy: first.body.payload.policy, decision: "ALLOWED", reasons: ["payment_within_limit"], rule: "allow_payment_within_limit" });
    expect(signedClaims(first.body.signature)).toEqual({
      v: 2, receipt_id: first.body.receipt_id, tenant_id: a.tenantId, key_id: first.body.key_id, kind: "protect", request_id: "bot-call-1",
      timestamp: first.body.timestamp, content_hash: first.body.content_hash, protect_receipt_id: null,
    });
    expect(first.body.content_hash).toBe(independentHash(first.body.payload));
    expect(await verifyResult(first.body, await jwks())).toEqual({ verified: true, checks: { content_hash: true, signature: true } });
    expect(first.headers.get("ratelimit-limit")).toBe("1000");
    expect(first.headers.get("ratelimit-remaining")).toBe("999");
    const reset = Number(first.headers.get("ratelimit-reset"));
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(Math.abs(reset - (midnight - now.getTime()) / 1000)).toBeLessThan(5);

    const second = await protect(a.apiKey, SMALL_PAYMENT);
    expect(second.body.seq).toBe(head.size + 1);
    expect(second.body.prev_hash).toBe(first.body.chain_hash);
    // Same input, same policy: same content_hash, whatever the request.
    expect(second.body.content_hash).toBe(first.body.content_hash);
    expect(second.body.receipt_id).not.toBe(first.body.receipt_id);
    expect(second.headers.get("ratelimit-remaining")).toBe("998");
  });

  test("a DENIED decision is a 200 result and a stored receipt too", async () => {
    const a = await signup();
    const reply = await protect(a.apiKey, LARGE_PAYMENT);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ decision: "DENIED", reasons: ["amount_over_limit"], seq: 1 }); // after the signup's event
    const stored = await call("GET", `/customer/receipts/${reply.body.receipt_id}`, { headers: bearer(a.token) });
    expect(stored.body.receipt).toEqual(Object.fromEntries(Object.entries(reply.body).filter(([k]) => k !== "ok" && k !== "verified")));
  });

  test("any text the schema allows is stored, \\u0000 included; a lone surrogate is no text: 400", async () => {
    const a = await signup();
    const input = { action: "document.read", resource: "nul\u0000and\ud83d\ude00", context: { note: "\u0000" } };
    const reply = await protect(a.apiKey, input);
    expect(reply.status).toBe(200);
    expect(reply.body.payload.input).toEqual(input);
    const verified = await verify(a.apiKey, { receipt: reply.body });
    expect(verified.body.verified).toBe(true);
    const lone = await protect(a.apiKey, { ...input, context: { note: "\ud800" } });
    expectErrorShape(lone, 400, "invalid_request");
    expect(lone.body.message).toStartWith("body/context/note: ");
  });

  test("bad input: 400 invalid_request with the path, 400 invalid_json, 415", async () => {
    const a = await signup();
    for (const [json, where] of [
      [{}, /action/],
      [{ action: "x", amount: -1 }, /amount/],
      [{ action: "x", currency: "usd" }, /currency/],
      [{ action: "x", preset: "small_payment" }, /preset/],
      [{ action: "has space" }, /action/],
      [[], /body/],
    ] as [unknown, RegExp][]) {
      const reply = await protect(a.apiKey, json);
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.body.message).toMatch(where);
    }
    expectErrorShape(await call("POST", "/v1/protect", { body: "{nope", headers: { ...apiKey(a.apiKey), "content-type": "application/json" } }), 400, "invalid_json");
    expectErrorShape(await call("POST", "/v1/protect", { body: "action=x", headers: { ...apiKey(a.apiKey), "content-type": "text/plain" } }), 415, "unsupported_media_type");
    expect((await usage(a.tenantId)).receipts_stored).toBe(0);
  });

  test("an API key is required: a JWT alone is 401", async () => {
    const a = await signup();
    expectErrorShape(await call("POST", "/v1/protect", { json: SMALL_PAYMENT, headers: bearer(a.token) }), 401, "unauthorized");
  });

  test("daily quota: the last call leaves 0, the next is 429 protect_per_day with headers; an upgrade lifts it at once", async () => {
    const a = await signup();
    await setUsage(a.tenantId, 998, 0);
    expect((await protect(a.apiKey)).headers.get("ratelimit-remaining")).toBe("1");
    expect((await protect(a.apiKey)).headers.get("ratelimit-remaining")).toBe("0");
    const refused = await protect(a.apiKey);
    expectErrorShape(refused, 429, "quota_exceeded");
    expect(refused.body.limit).toBe("protect_per_day");
    expect(refused.headers.get("ratelimit-limit")).toBe("1000");
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(refused.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
    expect(await usage(a.tenantId)).toMatchObject({ protect_today: 1000, receipts_stored: 2 });

    await setPlan(a.tenantId, "pro");
    const upgraded = await protect(a.apiKey);
    expect(upgraded.status).toBe(200);
    expect(upgraded.headers.get("ratelimit-limit")).toBe("5000");
    expect(upgraded.headers.get("ratelimit-remaining")).toBe("3999");
  });

  test("unlimited plans carry no RateLimit headers", async () => {
    const a = await signup();
    await setPlan(a.tenantId, "enterprise");
    const reply = await protect(a.apiKey);
    expect(reply.status).toBe(200);
    for (const h of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) expect(reply.headers.has(h)).toBe(false);
  });

  test("a new UTC day starts a new count", async () => {
    const a = await signup();
    await setUsage(a.tenantId, 1000, 0);
    expectErrorShape(await protect(a.apiKey), 429, "quota_exceeded");
    const tomorrow = await serviceAt(86_400_000);
    try {
      const reply = await protect(a.apiKey, SMALL_PAYMENT, { service: tomorrow });
      expect(reply.status).toBe(200);
      expect(reply.headers.get("ratelimit-remaining")).toBe("999");
    } finally {
      await tomorrow.close();
    }
  });
});

describe("POST /v1/execute", () => {
  let past: Service;
  let recent: Service;
  beforeAll(async () => {
    past = await serviceAt(-15 * 60_000 - 2_000);
    recent = await serviceAt(-14 * 60_000);
  });
  afterAll(async () => {
    await past?.close();
    await recent?.close();
  });

  test("200: executed once, stored as an execute receipt bound to the protect receipt", async () => {
    const a = await signup();
    const decided = (await protect(a.apiKey)).body;
    const reply = await execute(a.apiKey, decided.receipt_id, { headers: { "x-request-id": "exec-1" } });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual([...RESULT_FIELDS, "executed"].sort());
    expect(reply.body).toMatchObject({ ok: true, executed: true, verified: false, kind: "execute", protect_receipt_id: decided.receipt_id, decision: "ALLOWED", request_id: "exec-1", seq: decided.seq + 1, prev_hash: decided.chain_hash });
    expect(reply.body.receipt_id).not.toBe(decided.receipt_id);
    expect(reply.body.payload).toEqual({ ...decided.payload, kind: "execute" });
    expect(signedClaims(reply.body.signature)).toEqual({
      v: 2, receipt_id: reply.body.receipt_id, tenant_id: a.tenantId, key_id: decided.key_id, kind: "execute", request_id: "exec-1",
      timestamp: reply.body.timestamp, content_hash: reply.body.content_hash, protect_receipt_id: decided.receipt_id,
    });
    expect(reply.body.content_hash).toBe(independentHash(reply.body.payload));
    expect((await verifyResult(reply.body, await jwks())).verified).toBe(true);
    expect(reply.headers.get("ratelimit-limit")).toBe("100");
    expect(reply.headers.get("ratelimit-remaining")).toBe("99");
    const stored = await call("GET", `/customer/receipts/${reply.body.receipt_id}`, { headers: bearer(a.token) });
    expect(stored.body.receipt.protect_receipt_id).toBe(decided.receipt_id);
  });

  test("twice: 409 already_executed; DENIED: 403 decision_denied; neither counts", async () => {
    const a = await signup();
    const allowed = (await protect(a.apiKey)).body;
    const denied = (await protect(a.apiKey, LARGE_PAYMENT)).body;
    expect((await execute(a.apiKey, allowed.receipt_id)).status).toBe(200);
    expectErrorShape(await execute(a.apiKey, allowed.receipt_id), 409, "already_executed");
    expectErrorShape(await execute(a.apiKey, denied.receipt_id), 403, "decision_denied");
    expect(await usage(a.tenantId)).toMatchObject({ execute_today: 1, receipts_stored: 3 });
  });

  test("15 minutes old: 400 token_expired; 14 minutes old is fine", async () => {
    const a = await signup();
    const old = (await protect(a.apiKey, SMALL_PAYMENT, { service: past })).body;
    const fresh = (await protect(a.apiKey, SMALL_PAYMENT, { service: recent })).body;
    const expired = await execute(a.apiKey, old.receipt_id);
    expectErrorShape(expired, 400, "token_expired");
    expect(expired.body.message).toMatch(/15 minutes/);
    expect((await execute(a.apiKey, fresh.receipt_id)).status).toBe(200);
  });

  test("unknown, another tenant's, or an execute receipt: 404; a malformed id: 400", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    const mine = (await protect(a.apiKey)).body;
    expectErrorShape(await execute(b.apiKey, mine.receipt_id), 404, "not_found");
    expectErrorShape(await execute(a.apiKey, "rcpt_" + "0".repeat(22)), 404, "not_found");
    const done = (await execute(a.apiKey, mine.receipt_id)).body;
    expectErrorShape(await execute(a.apiKey, done.receipt_id), 404, "not_found");
    expectErrorShape(await execute(a.apiKey, "rcpt_short"), 404, "not_found");
    expectErrorShape(await call("POST", "/v1/execute", { json: { receipt_id: 7 }, headers: apiKey(a.apiKey) }), 400, "invalid_request");
    expectErrorShape(await call("POST", "/v1/execute", { json: { receipt_id: mine.receipt_id, extra: 1 }, headers: apiKey(a.apiKey) }), 400, "invalid_request");
    expect((await usage(b.tenantId)).execute_today).toBe(0);
  });

  test("parallel executes of one receipt: exactly one wins, the others get 409 already_executed", async () => {
    const a = await signup();
    const decided = (await protect(a.apiKey)).body;
    const replies = await Promise.all(Array.from({ length: 10 }, () => execute(a.apiKey, decided.receipt_id)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200)) expectErrorShape(r, 409, "already_executed");
    expect(await usage(a.tenantId)).toMatchObject({ execute_today: 1, receipts_stored: 2 });
  });

  test("daily execute quota: 429 execute_per_day", async () => {
    const a = await signup();
    const decided = (await protect(a.apiKey)).body;
    await setUsage(a.tenantId, 1, 100);
    const refused = await execute(a.apiKey, decided.receipt_id);
    expectErrorShape(refused, 429, "quota_exceeded");
    expect(refused.body.limit).toBe("execute_per_day");
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    expect((await usage(a.tenantId)).receipts_stored).toBe(1);
  });
});

describe("POST /v1/verify", () => {
  const ALL_TRUE = { content_hash: true, signature: true, decision: true, stored: true };

  test("a protect result, an execute result and a stored receipt all verify", async () => {
    const a = await signup();
    const decided = (await protect(a.apiKey)).body;
    const executed = (await execute(a.apiKey, decided.receipt_id)).body;
    const stored = (await call("GET", `/customer/receipts/${decided.receipt_id}`, { headers: bearer(a.token) })).body.receipt;
    for (const receipt of [decided, executed, stored]) {
      expect((await verify(a.apiKey, { receipt })).body).toEqual({ ok: true, verified: true, checks: ALL_TRUE });
    }
  });

  test("each check fails on its own tampering", async () => {
    const a = await signup();
    const r = (await protect(a.apiKey, LARGE_PAYMENT)).body;
    const check = async (receipt: unknown) => (await verify(a.apiKey, { receipt })).body;

    const flipped = await check({ ...r, decision: "ALLOWED", payload: { ...r.payload, decision: "ALLOWED" } });
    expect(flipped.verified).toBe(false);
    expect(flipped.checks).toMatchObject({ content_hash: false, decision: false, stored: false });

    // A payload re-hashed by the forger: the hash matches, but the signature and the decision do not.
    const forgedPayload = { ...r.payload, decision: "ALLOWED" };
    const forged = await check({ ...r, decision: "ALLOWED", payload: forgedPayload, content_hash: independentHash(forgedPayload) });
    expect(forged.checks).toEqual({ content_hash: true, signature: false, decision: false, stored: false });

    const otherSignature = (await protect(a.apiKey, LARGE_PAYMENT)).body.signature;
    expect((await check({ ...r, signature: otherSignature })).checks).toEqual({ content_hash: true, signature: false, decision: true, stored: false });

    expect((await check({ ...r, timestamp: new Date().toISOString() })).checks).toMatchObject({ signature: false, stored: false });
    // Another rule named, re-hashed by the forger: the decision check re-runs the policy and disagrees.
    const otherRule = { ...r.payload, rule: "allow_payment_within_limit" };
    expect((await check({ ...r, payload: otherRule, content_hash: independentHash(otherRule) })).checks).toEqual({ content_hash: true, signature: false, decision: false, stored: false });
    expect((await check({ ...r, chain_hash: "0x" + "00".repeat(32) })).checks).toEqual({ ...ALL_TRUE, stored: false });
  });

  test("changing any one signed claim of a protect, execute or simulation result fails the server's and the offline check", async () => {
    const a = await signup();
    const decided = (await protect(a.apiKey)).body;
    const executed = (await execute(a.apiKey, decided.receipt_id)).body;
    const simulated = (await call("POST", "/v1/simulate", { json: { preset: "small_payment" }, headers: apiKey(a.apiKey) })).body;
    const keys = await jwks();
    for (const result of [decided, executed, simulated]) {
      for (const [claim, tampered] of claimTampered(result)) {
        const server = (await verify(a.apiKey, { receipt: tampered })).body;
        expect({ kind: result.kind, claim, verified: server.verified, signature: server.checks.signature }).toEqual({ kind: result.kind, claim, verified: false, signature: false });
        expect({ kind: result.kind, claim, offline: (await verifyResult(tampered, keys)).verified }).toEqual({ kind: result.kind, claim, offline: false });
      }
    }
  });

  test("another tenant's genuine receipt: signed, but not stored for this caller", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    const r = (await protect(a.apiKey)).body;
    expect((await verify(b.apiKey, { receipt: r })).body).toEqual({ ok: true, verified: false, checks: { ...ALL_TRUE, stored: false } });
  });

  test("a simulation result verifies without being stored", async () => {
    const a = await signup();
    const sim = (await call("POST", "/v1/simulate", { json: { preset: "bulk_email" }, headers: apiKey(a.apiKey) })).body;
    expect((await verify(a.apiKey, { receipt: sim })).body).toEqual({ ok: true, verified: true, checks: { ...ALL_TRUE, stored: false } });
  });

  test("garbage receipts are verified false, never a 500", async () => {
    const a = await signup();
    const none = { content_hash: false, signature: false, decision: false, stored: false };
    for (const receipt of [null, 5, "x", [], {}, { payload: { input: 5, policy: "x" } }, { receipt_id: "rcpt_" + "x".repeat(5000), payload: [] }, { payload: { input: { action: "x" }, policy: { policy_id: "pol_x", version: 1e300, hash: "h" } } }, { signature: "a.b.c", payload: {}, content_hash: "0x" }]) {
      const reply = await verify(a.apiKey, { receipt });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ ok: true, verified: false, checks: none });
    }
  });

  test("the body must be an object with exactly `receipt`", async () => {
    const a = await signup();
    for (const json of [{}, { receipt: {}, extra: 1 }, [], "x"]) expectErrorShape(await verify(a.apiKey, json), 400, "invalid_request");
  });
});
