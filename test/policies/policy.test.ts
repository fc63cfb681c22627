// GET/PUT /customer/policy: immutable versions, gated by plan, and every decision naming the
// exact version it was made under.
import { describe, expect, test } from "bun:test";
import { canonicalize } from "json-canonicalize";
import canonicalizeReference from "canonicalize";
import { createHash } from "node:crypto";
import { DEFAULT_POLICY } from "../../src/decide/policy.ts";
import { apiKey, bearer, LARGE_PAYMENT, protect, setPlan, SMALL_PAYMENT } from "../helpers/customer.ts";
import { call, expectErrorShape, signup, subjectOf } from "../helpers/service.ts";

const getPolicy = (token: string) => call("GET", "/customer/policy", { headers: bearer(token) });
const putPolicy = (token: string, json: unknown) => call("PUT", "/customer/policy", { json, headers: bearer(token) });
const hashOf = (doc: unknown) => "0x" + createHash("sha256").update(canonicalizeReference(doc) as string, "utf8").digest("hex");

// Lets large payments through: the opposite of the default policy on LARGE_PAYMENT.
const GENEROUS = {
  default_effect: "deny",
  default_reason: "not_listed",
  rules: [{ id: "allow-payments", effect: "allow", reason: "payments_ok", when: { actions: ["payment.*"] } }],
};

describe("GET /customer/policy", () => {
  test("a new tenant sees the built-in default: pol_default version 1", async () => {
    const a = await signup();
    const reply = await getPolicy(a.token);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ok: true, policy_id: "pol_default", version: 1, hash: hashOf(DEFAULT_POLICY), document: DEFAULT_POLICY, published_by: null });
    expect(canonicalize(reply.body.document)).toBe(canonicalize(DEFAULT_POLICY));
  });
});

describe("PUT /customer/policy", () => {
  test("free plan: 403 plan_required with required_plan pro; nothing changes", async () => {
    const a = await signup();
    const reply = await putPolicy(a.token, { document: GENEROUS });
    expectErrorShape(reply, 403, "plan_required");
    expect(reply.body.required_plan).toBe("pro");
    expect((await getPolicy(a.token)).body.version).toBe(1);
  });

  test("pro: each PUT is a new version (2, 3, ...) with its hash; GET shows the latest", async () => {
    const a = await signup();
    await setPlan(a.tenantId, "pro");
    const v2 = await putPolicy(a.token, { document: GENEROUS });
    expect(v2.status).toBe(200);
    // The version names the member who published it.
    expect(v2.body).toEqual({ ok: true, policy_id: "pol_" + a.tenantId.slice(5), version: 2, hash: hashOf(GENEROUS), document: GENEROUS, published_by: subjectOf(a.token).member_id });
    const v3 = await putPolicy(a.token, { document: DEFAULT_POLICY });
    expect(v3.body).toMatchObject({ version: 3, hash: hashOf(DEFAULT_POLICY), policy_id: v2.body.policy_id });
    expect((await getPolicy(a.token)).body).toEqual(v3.body);
  });

  test("concurrent PUTs get distinct consecutive versions", async () => {
    const a = await signup();
    await setPlan(a.tenantId, "pro");
    const replies = await Promise.all(Array.from({ length: 6 }, () => putPolicy(a.token, { document: GENEROUS })));
    expect(replies.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(replies.map((r) => r.body.version).sort((x, y) => x - y)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  test("invalid documents: 400 invalid_request naming the path", async () => {
    const a = await signup();
    await setPlan(a.tenantId, "pro");
    const cases: [unknown, RegExp][] = [
      [{}, /^body/],
      [{ document: { ...GENEROUS, default_effect: "maybe" } }, /default_effect/],
      [{ document: { ...GENEROUS, rules: [{ ...GENEROUS.rules[0], when: { actions: [] } }] } }, /rules\/0\/when\/actions/],
      [{ document: { ...GENEROUS, rules: [{ ...GENEROUS.rules[0], when: { nope: 1 } }] } }, /rules\/0\/when\/nope/],
      [{ document: GENEROUS, extra: 1 }, /extra/],
      [{ document: "policy" }, /document/],
    ];
    for (const [json, where] of cases) {
      const reply = await putPolicy(a.token, json);
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.body.message).toMatch(where);
    }
    expect((await getPolicy(a.token)).body.version).toBe(1);
  });

  test("a reason holding \\u0000 is stored and hashed like any other text", async () => {
    const a = await signup();
    await setPlan(a.tenantId, "pro");
    const doc = { ...GENEROUS, default_reason: "nul\u0000here" };
    const reply = await putPolicy(a.token, { document: doc });
    expect(reply.status).toBe(200);
    expect(reply.body.hash).toBe(hashOf(doc));
    expect((await getPolicy(a.token)).body.document.default_reason).toBe("nul\u0000here");
  });
});

describe("decisions follow the active policy and name its version", () => {
  test("protect and simulate decide under the latest version; old receipts still verify under theirs", async () => {
    const a = await signup();
    const before = await protect(a.apiKey, LARGE_PAYMENT);
    expect(before.body.decision).toBe("DENIED");
    expect(before.body.payload.policy).toEqual({ policy_id: "pol_default", version: 1, hash: hashOf(DEFAULT_POLICY) });

    await setPlan(a.tenantId, "pro");
    const published = (await putPolicy(a.token, { document: GENEROUS })).body;
    const after = await protect(a.apiKey, LARGE_PAYMENT);
    expect(after.body.decision).toBe("ALLOWED");
    expect(after.body.reasons).toEqual(["payments_ok"]);
    expect(after.body.payload.policy).toEqual({ policy_id: published.policy_id, version: 2, hash: published.hash });

    const simulated = await call("POST", "/v1/simulate", { json: { preset: "large_payment" }, headers: apiKey(a.apiKey) });
    expect(simulated.body.decision).toBe("ALLOWED");
    expect(simulated.body.payload.policy.version).toBe(2);

    // Both receipts re-check under the version they name, not the current one.
    for (const receipt of [before.body, after.body]) {
      const verified = await call("POST", "/v1/verify", { json: { receipt }, headers: apiKey(a.apiKey) });
      expect(verified.body).toEqual({ ok: true, verified: true, checks: { content_hash: true, signature: true, decision: true, stored: true } });
    }
  });

  test("another tenant's policy never applies", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    await setPlan(a.tenantId, "pro");
    await putPolicy(a.token, { document: GENEROUS });
    const reply = await protect(b.apiKey, LARGE_PAYMENT);
    expect(reply.body.decision).toBe("DENIED");
    expect(reply.body.payload.policy.policy_id).toBe("pol_default");
    expect((await protect(b.apiKey, SMALL_PAYMENT)).body.decision).toBe("ALLOWED");
  });
});
