// POST /v1/simulate (and /api/simulate) as bots and customers call it.
import { describe, expect, test } from "bun:test";
import canonicalizeReference from "canonicalize";
import { createHash } from "node:crypto";
import { verifyResult } from "../../src/receipts/verify.ts";
import { DEFAULT_POLICY } from "../../src/decide/policy.ts";
import { PRESETS, presetNames } from "../../src/simulation/presets.ts";
import { claimTampered, signedClaims } from "../helpers/claims.ts";
import { call, expectErrorShape, signup, testService } from "../helpers/service.ts";

const simulate = (preset: unknown, headers: Record<string, string>, path = "/v1/simulate") => call("POST", path, { json: { preset }, headers });

async function jwks() {
  const reply = await call("GET", "/.well-known/jwks.json");
  expect(reply.status).toBe(200);
  return reply.body as { keys: JsonWebKey[] };
}

// A second RFC 8785 implementation (the `canonicalize` package) and node's SHA-256, so the hash
// is not only checked by the code that made it.
function independentHash(payload: unknown): string {
  return "0x" + createHash("sha256").update(canonicalizeReference(payload) as string, "utf8").digest("hex");
}

const EXPECTED: Record<string, "ALLOWED" | "DENIED"> = {
  small_payment: "ALLOWED",
  read_document: "ALLOWED",
  send_email: "ALLOWED",
  deploy_staging: "ALLOWED",
  deploy_production_approved: "ALLOWED",
  large_payment: "DENIED",
  foreign_currency_payment: "DENIED",
  drop_production_database: "DENIED",
  delete_production_records: "DENIED",
  shell_command: "DENIED",
  bulk_email: "DENIED",
  deploy_production_unapproved: "DENIED",
  unknown_action: "DENIED",
};

describe("POST /v1/simulate", () => {
  test("every preset answers as listed, with a result that verifies offline", async () => {
    const user = await signup();
    const keys = await jwks();
    expect(presetNames().sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const name of presetNames()) {
      const reply = await simulate(name, { "x-api-key": user.apiKey });
      expect(reply.status).toBe(200);
      const r = reply.body;
      expect(Object.keys(r).sort()).toEqual([
        "action_allowable", "approval_required", "content_hash", "decision", "key_id", "kind", "ok", "payload", "preset", "protect_receipt_id", "reasons", "receipt_id", "request_id", "signature", "tenant_id", "timestamp", "verified",
      ]);
      expect(r).toMatchObject({ tenant_id: user.tenantId, receipt_id: null, protect_receipt_id: null, kind: "simulation" });
      expect(r.key_id).toMatch(/^key_/);
      expect(r).toMatchObject({ ok: true, verified: false, decision: EXPECTED[name], preset: name });
      expect(r.content_hash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(r.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const rule = DEFAULT_POLICY.rules.find((x) => x.reason === r.reasons[0])?.id ?? null;
      expect(r.payload).toEqual({ v: 2, kind: "simulation", input: PRESETS[name].input, policy: { policy_id: "pol_default", version: 1, hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }, decision: r.decision, reasons: r.reasons, rule, preset: name });
      expect(independentHash(r.payload)).toBe(r.content_hash);
      expect(r.request_id).toBe(reply.headers.get("x-request-id"));
      expect(await verifyResult(r, keys)).toEqual({ verified: true, checks: { content_hash: true, signature: true } });
    }
  });

  test("same preset and policy: same content_hash across request ids, keys, tenants and credentials", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    const replies = await Promise.all([
      simulate("large_payment", { "x-api-key": a.apiKey, "x-request-id": "one" }),
      simulate("large_payment", { "x-api-key": a.apiKey, "x-request-id": "two" }),
      simulate("large_payment", { "x-api-key": b.apiKey }),
      simulate("large_payment", { authorization: `Bearer ${b.token}` }),
      simulate("large_payment", { "x-api-key": a.apiKey }, "/api/simulate"),
    ]);
    const hashes = new Set(replies.map((r) => r.body.content_hash));
    expect(hashes.size).toBe(1);
    // ...while the signatures bind each result to its own request.
    expect(new Set(replies.map((r) => r.body.signature)).size).toBe(replies.length);
    // A different preset hashes differently.
    const other = await simulate("small_payment", { "x-api-key": a.apiKey });
    expect(hashes.has(other.body.content_hash)).toBe(false);
  });

  test("the caller's X-Request-ID is the result's request_id and is signed", async () => {
    const user = await signup();
    const reply = await simulate("send_email", { "x-api-key": user.apiKey, "x-request-id": "agent-run-42" });
    expect(reply.body.request_id).toBe("agent-run-42");
    const keyId = (await call("GET", "/customer/keys", { headers: { authorization: `Bearer ${user.token}` } })).body.keys[0].key_id;
    expect(signedClaims(reply.body.signature)).toEqual({
      v: 2, receipt_id: null, tenant_id: user.tenantId, key_id: keyId, kind: "simulation", request_id: "agent-run-42",
      timestamp: reply.body.timestamp, content_hash: reply.body.content_hash, protect_receipt_id: null,
    });
    // A session's simulation names no key.
    const bySession = await simulate("send_email", { authorization: `Bearer ${user.token}` });
    expect(bySession.body.key_id).toBeNull();
    expect(signedClaims(bySession.body.signature)).toMatchObject({ key_id: null, tenant_id: user.tenantId });
    expect((await verifyResult(bySession.body, await jwks())).verified).toBe(true);
    const header = JSON.parse(Buffer.from(reply.body.signature.split(".")[0], "base64url").toString());
    expect(header.alg).toBe("EdDSA");
    expect((await jwks()).keys.map((k) => (k as { kid: string }).kid)).toContain(header.kid);
  });

  test("a result edited after the fact no longer verifies", async () => {
    const user = await signup();
    const keys = await jwks();
    const { body } = await simulate("large_payment", { "x-api-key": user.apiKey });
    const flipped = { ...body, decision: "ALLOWED", payload: { ...body.payload, decision: "ALLOWED" } };
    expect((await verifyResult(flipped, keys)).checks.content_hash).toBe(false);
    const rehashed = { ...flipped, content_hash: independentHash(flipped.payload) };
    expect(await verifyResult(rehashed, keys)).toEqual({ verified: false, checks: { content_hash: true, signature: false } });
  });

  test("changing any one signed claim of a saved result makes the offline check fail", async () => {
    const user = await signup();
    const keys = await jwks();
    for (const headers of [{ "x-api-key": user.apiKey }, { authorization: `Bearer ${user.token}` }] as Record<string, string>[]) {
      const { body } = await simulate("small_payment", headers);
      expect((await verifyResult(body, keys)).verified).toBe(true);
      for (const [claim, tampered] of claimTampered(body)) {
        const outcome = await verifyResult(tampered, keys);
        expect({ claim, verified: outcome.verified, signature: outcome.checks.signature }).toEqual({ claim, verified: false, signature: false });
      }
      // A result that leaves a claim out does not verify either.
      for (const claim of ["tenant_id", "key_id", "receipt_id", "protect_receipt_id", "kind"]) {
        const { [claim]: _dropped, ...rest } = body;
        expect((await verifyResult(rest, keys)).verified).toBe(false);
      }
    }
  });

  test("the alias /api/simulate is the same operation", async () => {
    const user = await signup();
    const reply = await simulate("shell_command", { "x-api-key": user.apiKey }, "/api/simulate");
    expect(reply.status).toBe(200);
    expect(reply.body.decision).toBe("DENIED");
    expectErrorShape(await simulate("nope", { "x-api-key": user.apiKey }, "/api/simulate"), 400, "invalid_preset");
  });

  for (const preset of ["nope", "", "SMALL_PAYMENT", "__proto__", "constructor", "toString"]) {
    test(`unknown preset ${JSON.stringify(preset)} is invalid_preset`, async () => {
      const user = await signup();
      expectErrorShape(await simulate(preset, { "x-api-key": user.apiKey }), 400, "invalid_preset");
    });
  }

  test("action_allowable: whether another input with the action could pass, under the default policy", async () => {
    const user = await signup();
    const ask = async (input: unknown) => (await call("POST", "/v1/simulate", { json: { input }, headers: { "x-api-key": user.apiKey } })).body;
    // Over the limit is DENIED, yet a smaller payment passes: the action stays allowable.
    expect(await ask({ action: "payment.send", amount: 5000, currency: "USD" })).toMatchObject({ decision: "DENIED", action_allowable: true });
    // A shell is denied whatever the rest says, and nothing names this action: neither is.
    expect(await ask({ action: "shell.exec", context: { cmd: "ls" } })).toMatchObject({ decision: "DENIED", action_allowable: false });
    expect(await ask({ action: "nothing.names.this" })).toMatchObject({ decision: "DENIED", action_allowable: false });
    // Bulk email is denied by its context; other email passes.
    expect(await ask({ action: "email.send", context: { bulk: true } })).toMatchObject({ decision: "DENIED", action_allowable: true });
    // A delete is denied in production by a rule, elsewhere by the default: no input passes.
    expect(await ask({ action: "file.delete", resource: "staging/a" })).toMatchObject({ decision: "DENIED", action_allowable: false });
  });

  test("a preset that is not a string, a missing preset, extra fields: invalid_request", async () => {
    const user = await signup();
    expectErrorShape(await simulate(7, { "x-api-key": user.apiKey }), 400, "invalid_request");
    expectErrorShape(await call("POST", "/v1/simulate", { json: {}, headers: { "x-api-key": user.apiKey } }), 400, "invalid_request");
    expectErrorShape(await call("POST", "/v1/simulate", { json: { preset: "small_payment", amount: 5 }, headers: { "x-api-key": user.apiKey } }), 400, "invalid_request");
  });
});

describe("simulate authentication", () => {
  test("no credentials: 401", async () => {
    expectErrorShape(await simulate("small_payment", {}), 401, "unauthorized");
  });

  test("a malformed or mistyped key is refused without a lookup; an unknown well-formed key too", async () => {
    const user = await signup();
    expectErrorShape(await simulate("small_payment", { "x-api-key": "warden_live_nope" }), 401, "unauthorized");
    const typo = user.apiKey.slice(0, 20) + (user.apiKey[20] === "a" ? "b" : "a") + user.apiKey.slice(21);
    expectErrorShape(await simulate("small_payment", { "x-api-key": typo }), 401, "unauthorized");
  });

  test("a revoked key is refused on the very next request", async () => {
    const user = await signup();
    expect((await simulate("small_payment", { "x-api-key": user.apiKey })).status).toBe(200);
    const { db } = await testService();
    const [key] = await db.query("keys/authenticate", [[await (await import("../../src/keys/secret.ts")).hashSecret(user.apiKey)]]);
    await db.query("keys/revoke", [user.tenantId, key.key_id, null]);
    expectErrorShape(await simulate("small_payment", { "x-api-key": user.apiKey }), 401, "key_revoked");
    // The session of the same tenant still works.
    expect((await simulate("small_payment", { authorization: `Bearer ${user.token}` })).status).toBe(200);
  });

  test("a key in the query string is ignored", async () => {
    const user = await signup();
    expectErrorShape(await call("POST", `/v1/simulate?api_key=${user.apiKey}`, { json: { preset: "small_payment" } }), 401, "unauthorized");
  });

  test("the credential is checked before the preset, so no preset list leaks to strangers", async () => {
    expectErrorShape(await simulate("nope", {}), 401, "unauthorized");
  });
});

describe("GET /v1/presets and the JWKS", () => {
  test("lists every preset with its input, at least 4 of each decision", async () => {
    const reply = await call("GET", "/v1/presets");
    expect(reply.status).toBe(200);
    expect(reply.body.presets.map((p: { preset: string }) => p.preset)).toEqual(presetNames());
    for (const p of reply.body.presets) expect(p.input).toEqual(PRESETS[p.preset].input);
    const decisions = Object.values(EXPECTED);
    expect(decisions.filter((d) => d === "ALLOWED").length).toBeGreaterThanOrEqual(4);
    expect(decisions.filter((d) => d === "DENIED").length).toBeGreaterThanOrEqual(4);
  });

  test("the JWKS holds Ed25519 public keys only", async () => {
    const { keys } = await jwks();
    expect(keys.length).toBeGreaterThanOrEqual(1);
    for (const k of keys) {
      expect(k).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
      expect("d" in k).toBe(false);
    }
  });
});
