// POST /v1/simulate, version 2: an input of the caller's own, a stored version of its tenant, and
// (with a session) an unsaved draft (docs/api.md, Simulation).
import { describe, expect, test } from "bun:test";
import canonicalizeReference from "canonicalize";
import { createHash } from "node:crypto";
import { verifyResult } from "../../src/receipts/verify.ts";
import { DEFAULT_POLICY } from "../../src/decide/policy.ts";
import { apiKey, bearer, LARGE_PAYMENT, setPlan } from "../helpers/customer.ts";
import { call, expectErrorShape, signup } from "../helpers/service.ts";

const sim = (json: unknown, headers: Record<string, string>, path = "/v1/simulate") => call("POST", path, { json, headers });
const hashOf = (value: unknown) => "0x" + createHash("sha256").update(canonicalizeReference(value) as string, "utf8").digest("hex");

const GENEROUS = {
  default_effect: "deny",
  default_reason: "not_listed",
  rules: [{ id: "allow-payments", effect: "allow", reason: "payments_ok", when: { actions: ["payment.*"] } }],
};

describe("simulate an input", () => {
  test("decides the caller's input under the active policy; preset is null and absent from the payload", async () => {
    const a = await signup();
    const reply = await sim({ input: LARGE_PAYMENT }, apiKey(a.apiKey));
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ ok: true, decision: "DENIED", reasons: ["amount_over_limit"], preset: null });
    expect(reply.body.payload.input).toEqual(LARGE_PAYMENT);
    expect("preset" in reply.body.payload).toBe(false);
    expect(hashOf(reply.body.payload)).toBe(reply.body.content_hash);
    const keys = (await call("GET", "/.well-known/jwks.json")).body;
    expect((await verifyResult(reply.body, keys)).verified).toBe(true);
    // Deterministic: same input, same policy, another credential: same hash.
    const again = await sim({ input: LARGE_PAYMENT }, bearer(a.token), "/api/simulate");
    expect(again.body.content_hash).toBe(reply.body.content_hash);
  });

  test("preset and input together, or neither, or a bad input: 400 invalid_request with the path", async () => {
    const a = await signup();
    const cases: [unknown, RegExp][] = [
      [{ preset: "small_payment", input: LARGE_PAYMENT }, /preset or input/],
      [{}, /preset or input/],
      [{ input: { ...LARGE_PAYMENT, amount: "5" } }, /body\/input\/amount/],
      [{ input: { action: "x", extra: 1 } }, /body\/input/],
      [{ preset: "small_payment", policy_version: "2" }, /policy_version/],
    ];
    for (const [json, where] of cases) {
      const reply = await sim(json, apiKey(a.apiKey));
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.body.message).toMatch(where);
    }
  });
});

describe("simulate under a stored version", () => {
  test("policy_version picks a version of the caller's tenant; an unknown one or another tenant's is 404", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    await setPlan(a.tenantId, "pro");
    const v2 = (await call("PUT", "/customer/policy", { json: { document: GENEROUS }, headers: bearer(a.token) })).body;
    const now = await sim({ input: LARGE_PAYMENT }, apiKey(a.apiKey));
    expect(now.body).toMatchObject({ decision: "ALLOWED", payload: { policy: { policy_id: v2.policy_id, version: 2, hash: v2.hash } } });
    const old = await sim({ input: LARGE_PAYMENT, policy_version: 1 }, apiKey(a.apiKey));
    expect(old.body).toMatchObject({ decision: "DENIED", payload: { policy: { policy_id: "pol_default", version: 1, hash: hashOf(DEFAULT_POLICY) } } });
    const bySession = await sim({ preset: "large_payment", policy_version: 2 }, bearer(a.token));
    expect(bySession.body).toMatchObject({ decision: "ALLOWED", preset: "large_payment" });
    expectErrorShape(await sim({ preset: "large_payment", policy_version: 3 }, apiKey(a.apiKey)), 404, "not_found");
    expectErrorShape(await sim({ preset: "large_payment", policy_version: 2 }, apiKey(b.apiKey)), 404, "not_found");
    expectErrorShape(await sim({ preset: "large_payment", policy_version: 2 }, bearer(b.token)), 404, "not_found");
  });
});

describe("simulate a draft", () => {
  test("with a session: decided under the draft, named draft with its hash, nothing stored", async () => {
    const a = await signup();
    const reply = await sim({ preset: "large_payment", document: GENEROUS }, bearer(a.token));
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ decision: "ALLOWED", reasons: ["payments_ok"] });
    expect(reply.body.payload.policy).toEqual({ policy_id: "draft", version: null, hash: hashOf(GENEROUS) });
    expect(hashOf(reply.body.payload)).toBe(reply.body.content_hash);
    const again = await sim({ preset: "large_payment", document: GENEROUS }, bearer(a.token));
    expect(again.body.content_hash).toBe(reply.body.content_hash);
    expect((await call("GET", "/customer/policy", { headers: bearer(a.token) })).body.version).toBe(1);
    expect((await call("GET", "/customer/policy/versions", { headers: bearer(a.token) })).body.versions).toHaveLength(1);
  });

  test("an API key may not send a draft; a draft with policy_version is refused; a bad draft names its path", async () => {
    const a = await signup();
    const byKey = await sim({ preset: "large_payment", document: GENEROUS }, apiKey(a.apiKey));
    expectErrorShape(byKey, 400, "invalid_request");
    expect(byKey.body.message).toMatch(/document/);
    expectErrorShape(await sim({ preset: "large_payment", document: GENEROUS, policy_version: 1 }, bearer(a.token)), 400, "invalid_request");
    const bad = { ...GENEROUS, rules: [{ ...GENEROUS.rules[0], when: { currency: { gt: 5 } } }] };
    const reply = await sim({ preset: "large_payment", document: bad }, bearer(a.token));
    expectErrorShape(reply, 400, "invalid_request");
    expect(reply.body.message).toMatch(/body\/document\/rules\/0\/when\/currency/);
  });
});

describe("keys conditions: one bot's key allowed what another's is not", () => {
  test("the deciding key is in the payload (principal) only under a version that reads keys, and verifies", async () => {
    const a = await signup();
    await setPlan(a.tenantId, "pro");
    const second = await call("POST", "/customer/keys", { json: { label: "bot-2" }, headers: bearer(a.token) });
    const keyA = (await call("GET", "/customer/keys", { headers: bearer(a.token) })).body.keys.find((k: { key_id: string }) => k.key_id !== second.body.key_id).key_id;
    const keyB = second.body.key_id;

    const before = await call("POST", "/v1/protect", { json: LARGE_PAYMENT, headers: apiKey(a.apiKey) });
    expect("principal" in before.body.payload).toBe(false);

    const document = {
      default_effect: "deny",
      default_reason: "not_this_bot",
      rules: [{ id: "bot-a-pays", effect: "allow", reason: "bot_a_may_pay", when: { actions: ["payment.*"], keys: [keyA] } }],
    };
    expect((await call("PUT", "/customer/policy", { json: { document }, headers: bearer(a.token) })).status).toBe(200);
    const allowed = await call("POST", "/v1/protect", { json: LARGE_PAYMENT, headers: apiKey(a.apiKey) });
    expect(allowed.body).toMatchObject({ decision: "ALLOWED", payload: { rule: "bot-a-pays", principal: { key_id: keyA } } });
    const denied = await call("POST", "/v1/protect", { json: LARGE_PAYMENT, headers: apiKey(second.body.secret) });
    expect(denied.body).toMatchObject({ decision: "DENIED", payload: { rule: null, principal: { key_id: keyB } } });
    // Same input, same version, other key: another fact, so another hash.
    const simA = await sim({ input: LARGE_PAYMENT }, apiKey(a.apiKey));
    const simB = await sim({ input: LARGE_PAYMENT }, apiKey(second.body.secret));
    expect(simA.body.content_hash).not.toBe(simB.body.content_hash);
    expect(simA.body.payload.principal).toEqual({ key_id: keyA });
    // The preset memo keeps keys apart too.
    const presetA = await sim({ preset: "large_payment" }, apiKey(a.apiKey));
    const presetB = await sim({ preset: "large_payment" }, apiKey(second.body.secret));
    expect([presetA.body.decision, presetB.body.decision]).toEqual(["ALLOWED", "DENIED"]);
    // A session is no key.
    const bySession = await sim({ input: LARGE_PAYMENT }, bearer(a.token));
    expect(bySession.body).toMatchObject({ decision: "DENIED", payload: { principal: { key_id: null } } });

    for (const receipt of [allowed.body, denied.body]) {
      const verified = await call("POST", "/v1/verify", { json: { receipt }, headers: apiKey(a.apiKey) });
      expect(verified.body).toMatchObject({ ok: true, verified: true });
    }
  });
});
