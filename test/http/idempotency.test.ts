// Idempotency-Key on the POSTs that create or change something (docs/api.md, the introduction).
import { describe, expect, test } from "bun:test";
import { idempotencyKeyHash, requestFingerprint } from "../../src/http/idempotency.ts";
import { apiKey, bearer, execute, LARGE_PAYMENT, protect, setUsage, SMALL_PAYMENT } from "../helpers/customer.ts";
import { call, expectErrorShape, signup, testService } from "../helpers/service.ts";

const usage = async (tenantId: string) => (await (await testService()).db.one("receipts/usage_summary", [tenantId, null]))!;
const idem = (key: string) => ({ "idempotency-key": key });

describe("Idempotency-Key on /v1/protect", () => {
  test("a retry with the same key and body gets the first response byte for byte, and counts once", async () => {
    const a = await signup();
    const first = await protect(a.apiKey, SMALL_PAYMENT, { headers: idem("order-42") });
    expect(first.status).toBe(200);
    expect(first.headers.has("idempotent-replayed")).toBe(false);
    // Key order does not matter: the body is compared in its JCS form.
    const reordered = { currency: "USD", amount: 250, resource: "vendor/acme", action: "payment.send" };
    const again = await protect(a.apiKey, reordered, { headers: idem("order-42") });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("ratelimit-remaining")).toBe(first.headers.get("ratelimit-remaining"));
    expect(await usage(a.tenantId)).toMatchObject({ protect_today: 1, receipts_stored: 1 });
    // Without the key, or with another key, it is a new call.
    expect((await protect(a.apiKey, SMALL_PAYMENT)).body.seq).toBe(first.body.seq + 1);
    expect((await protect(a.apiKey, SMALL_PAYMENT, { headers: idem("order-43") })).body.seq).toBe(first.body.seq + 2);
  });

  test("the same key with another body: 422 idempotency_mismatch; keys are per tenant", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    await protect(a.apiKey, SMALL_PAYMENT, { headers: idem("k-1") });
    expectErrorShape(await protect(a.apiKey, LARGE_PAYMENT, { headers: idem("k-1") }), 422, "idempotency_mismatch");
    expectErrorShape(await call("POST", "/v1/execute", { json: { receipt_id: "rcpt_" + "0".repeat(22) }, headers: { ...apiKey(a.apiKey), ...idem("k-1") } }), 422, "idempotency_mismatch");
    // Another tenant's identical key is unrelated.
    const theirs = await protect(b.apiKey, LARGE_PAYMENT, { headers: idem("k-1") });
    expect(theirs.status).toBe(200);
    expect(theirs.body.tenant_id).toBe(b.tenantId);
  });

  test("while the first request runs: 409 idempotency_in_progress", async () => {
    const a = await signup();
    const { db } = await testService();
    // A claim another request holds right now, made the way the helper makes it.
    const fingerprint = await requestFingerprint("POST", "/v1/protect", SMALL_PAYMENT);
    expect((await db.one("idempotency/claim", [a.tenantId, idempotencyKeyHash("busy"), fingerprint]))!.outcome).toBe("claimed");
    expectErrorShape(await protect(a.apiKey, SMALL_PAYMENT, { headers: idem("busy") }), 409, "idempotency_in_progress");
    expect((await usage(a.tenantId)).protect_today).toBe(0);
  });

  test("concurrent retries with one key run the operation at most once", async () => {
    const a = await signup();
    const replies = await Promise.all(Array.from({ length: 8 }, () => protect(a.apiKey, SMALL_PAYMENT, { headers: idem("burst") })));
    const ok = replies.filter((r) => r.status === 200);
    for (const r of replies.filter((r) => r.status !== 200)) expectErrorShape(r, 409, "idempotency_in_progress");
    expect(new Set(ok.map((r) => r.text)).size).toBe(1);
    expect(await usage(a.tenantId)).toMatchObject({ protect_today: 1, receipts_stored: 1 });
  });

  test("the key must be 1 to 255 characters", async () => {
    const a = await signup();
    expectErrorShape(await protect(a.apiKey, SMALL_PAYMENT, { headers: idem("") }), 400, "invalid_request");
    expectErrorShape(await protect(a.apiKey, SMALL_PAYMENT, { headers: idem("k".repeat(256)) }), 400, "invalid_request");
    expect((await protect(a.apiKey, SMALL_PAYMENT, { headers: idem("k".repeat(255)) })).status).toBe(200);
  });

  test("a 429 is not stored: once the quota frees up, the same key runs", async () => {
    const a = await signup();
    await setUsage(a.tenantId, 1000, 0);
    expectErrorShape(await protect(a.apiKey, SMALL_PAYMENT, { headers: idem("later") }), 429, "quota_exceeded");
    await setUsage(a.tenantId, 10, 0);
    const reply = await protect(a.apiKey, SMALL_PAYMENT, { headers: idem("later") });
    expect(reply.status).toBe(200);
    expect(reply.headers.has("idempotent-replayed")).toBe(false);
  });
});

describe("Idempotency-Key on /v1/execute and key management", () => {
  test("execute: the success is replayed (not 409 already_executed); a stored 4xx is replayed too", async () => {
    const a = await signup();
    const allowed = (await protect(a.apiKey)).body;
    const denied = (await protect(a.apiKey, LARGE_PAYMENT)).body;
    const first = await execute(a.apiKey, allowed.receipt_id, { headers: idem("run-1") });
    expect(first.status).toBe(200);
    const again = await execute(a.apiKey, allowed.receipt_id, { headers: idem("run-1") });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    const refused = await execute(a.apiKey, denied.receipt_id, { headers: idem("run-2") });
    expectErrorShape(refused, 403, "decision_denied");
    const refusedAgain = await execute(a.apiKey, denied.receipt_id, { headers: idem("run-2") });
    expect(refusedAgain.status).toBe(403);
    expect(refusedAgain.text).toBe(refused.text);
  });

  test("create, rotate and revoke replay their first response; the secret is the same, no second key", async () => {
    const a = await signup();
    const create = () => call("POST", "/customer/keys", { json: { label: "once" }, headers: { ...bearer(a.token), ...idem("create-1") } });
    const first = await create();
    expect(first.status).toBe(201);
    const again = await create();
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    const keys = (await call("GET", "/customer/keys", { headers: bearer(a.token) })).body.keys;
    expect(keys).toHaveLength(2);

    const rotate = () => call("POST", `/customer/keys/${first.body.key_id}/rotate`, { headers: { ...bearer(a.token), ...idem("rot-1") } });
    const rotated = await rotate();
    expect(rotated.status).toBe(201);
    expect((await rotate()).text).toBe(rotated.text);
    // The same key on another path is another request.
    expectErrorShape(await call("POST", `/customer/keys/${rotated.body.key_id}/rotate`, { headers: { ...bearer(a.token), ...idem("rot-1") } }), 422, "idempotency_mismatch");

    const revoke = () => call("POST", `/customer/keys/${rotated.body.key_id}/revoke`, { headers: { ...bearer(a.token), ...idem("rev-1") } });
    const revoked = await revoke();
    expect(revoked.status).toBe(200);
    const revokedAgain = await revoke();
    expect(revokedAgain.status).toBe(200);
    expect(revokedAgain.text).toBe(revoked.text);
    expect((await call("GET", "/customer/keys", { headers: bearer(a.token) })).body.keys).toHaveLength(3);
  });
});
