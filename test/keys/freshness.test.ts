// A key's context is read once and then reused while nothing it depends on changed
// (src/keys/authenticate.ts): on PostgreSQL every request reads its tenant's epoch; on the embedded
// database, whose every change this process hears of before the change's answer, a notice drops
// the tenant's contexts and a request reads nothing. A revoke, rotation, plan change, new policy
// version or catalog change is seen by the very next request, also one that raced with it, on both
// databases.
import { beforeAll, describe, expect, test } from "bun:test";
import type { Db } from "../../src/db/index.ts";
import { bearer, execute, protect } from "../helpers/customer.ts";
import { approve } from "../helpers/ops.ts";
import { call, expectErrorShape, signup, testService } from "../helpers/service.ts";
import { sqlstate, testQuery } from "../helpers/sql.ts";

let db: Db;
let lookups = 0;
let epochChecks = 0;

beforeAll(async () => {
  db = (await testService()).db;
  const query = db.query;
  // Counts the secrets looked up and the epochs checked (the coalescers call db.query at call time).
  (db as { query: Db["query"] }).query = (...args) => {
    if (args[0] === "keys/authenticate") lookups += (args[1]?.[0] as unknown[]).length;
    if (args[0] === "keys/epochs") epochChecks += (args[1]?.[0] as unknown[]).length;
    return query(...args);
  };
});

const simulate = (secret: string) => call("POST", "/v1/simulate", { json: { preset: "small_payment" }, headers: { "x-api-key": secret } });
const keyOf = async (token: string) => (await call("GET", "/customer/keys", { headers: bearer(token) })).body.keys[0].key_id as string;

describe("key freshness", () => {
  test("the key is read once, then only its tenant's epoch (PostgreSQL) or nothing (embedded), for simulate, protect and execute alike", async () => {
    const a = await signup();
    const [lookupsBefore, checksBefore] = [lookups, epochChecks];
    for (let i = 0; i < 3; i++) {
      expect((await simulate(a.apiKey)).status).toBe(200);
      const decided = await protect(a.apiKey);
      expect(decided.status).toBe(200);
      expect((await execute(a.apiKey, decided.body.receipt_id)).status).toBe(200);
    }
    expect([lookups - lookupsBefore, epochChecks - checksBefore]).toEqual([1, db.kind === "embedded" ? 0 : 8]);
    // A change the context depends on: the epoch moved, so the next request reads the key again.
    expect((await call("POST", "/customer/keys", { json: { label: "second" }, headers: bearer(a.token) })).status).toBe(201);
    expect((await simulate(a.apiKey)).status).toBe(200);
    expect(lookups - lookupsBefore).toBe(1); // a new key changes nothing another key may do
    const upgrade = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "more" }, headers: bearer(a.token) })).body;
    await approve(upgrade.request_id);
    expect((await simulate(a.apiKey)).status).toBe(200);
    expect(lookups - lookupsBefore).toBe(2);
  });

  test("a revoke is refused on the very next request, also when it ran during a lookup (20 rounds)", async () => {
    for (let round = 0; round < 20; round++) {
      const a = await signup();
      const keyId = await keyOf(a.token);
      expect((await simulate(a.apiKey)).status).toBe(200);
      // The revoke starts while lookups of the same key are in flight or queued.
      const [, revoked] = await Promise.all([
        Promise.all([simulate(a.apiKey), protect(a.apiKey)]),
        call("POST", `/customer/keys/${keyId}/revoke`, { headers: bearer(a.token) }),
      ]);
      expect(revoked.status).toBe(200);
      expectErrorShape(await simulate(a.apiKey), 401, "key_revoked");
      expectErrorShape(await protect(a.apiKey), 401, "key_revoked");
    }
  });

  test("a rotation, a plan upgrade and a new policy version are seen by the next request", async () => {
    const a = await signup();
    expect((await protect(a.apiKey)).headers.get("ratelimit-limit")).toBe("1000");
    expect((await protect(a.apiKey)).headers.get("ratelimit-limit")).toBe("1000");

    const upgrade = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "more" }, headers: bearer(a.token) })).body;
    await approve(upgrade.request_id);
    expect((await protect(a.apiKey)).headers.get("ratelimit-limit")).toBe("5000");

    const first = (await protect(a.apiKey)).body.payload.policy;
    const current = (await call("GET", "/customer/policy", { headers: bearer(a.token) })).body;
    expect((await call("PUT", "/customer/policy", { json: { document: current.document }, headers: bearer(a.token) })).status).toBe(200);
    const next = (await protect(a.apiKey)).body.payload.policy;
    expect(next.version).toBe(first.version + 1);

    const keyId = await keyOf(a.token);
    const rotated = await call("POST", `/customer/keys/${keyId}/rotate`, { headers: bearer(a.token) });
    expect(rotated.status).toBe(201);
    expectErrorShape(await protect(a.apiKey), 401, "key_revoked");
    expect((await protect(rotated.body.secret)).status).toBe(200);
  });

  test("a revoked key gets 401 key_revoked whatever else is wrong with the request", async () => {
    const a = await signup();
    expect((await protect(a.apiKey)).status).toBe(200);
    // With the key still active, a refused body keeps its own answer.
    expectErrorShape(await protect(a.apiKey, { resource: "no action" }), 400, "invalid_request");
    expectErrorShape(await execute(a.apiKey, "rcpt_AAAAAAAAAAAAAAAAAAAAAA"), 404, "not_found");
    const revoked = await call("POST", `/customer/keys/${await keyOf(a.token)}/revoke`, { headers: bearer(a.token) });
    expect(revoked.status).toBe(200);
    expectErrorShape(await protect(a.apiKey, { resource: "no action" }), 401, "key_revoked");
    expectErrorShape(await execute(a.apiKey, "rcpt_AAAAAAAAAAAAAAAAAAAAAA"), 401, "key_revoked");
    expectErrorShape(await protect(a.apiKey), 401, "key_revoked");
    expect((await call("GET", "/customer/dashboard", { headers: bearer(a.token) })).body.usage).toMatchObject({ protect_today: 1, receipts_stored: 1 });
  });

  test("an operator's catalog change is seen by the next protect", async () => {
    const a = await signup();
    expect((await protect(a.apiKey)).status).toBe(200);
    try {
      await testQuery(db, "feature_set", ["protect", "pro", "self_serve"]);
      expectErrorShape(await protect(a.apiKey), 403, "plan_required");
    } finally {
      await testQuery(db, "feature_set", ["protect", "free", "self_serve"]);
    }
    expect((await protect(a.apiKey)).status).toBe(200);
  });

  test("what a context depends on never leaves unseen: no catalog row is deleted, no one truncates the grants (WU007)", async () => {
    expect(await sqlstate(testQuery(db, "catalog_delete", ["dedicated_region"]))).toBe("WU007");
    expect(await sqlstate(testQuery(db, "feature_grants_truncate"))).toBe("WU007");
  });
});
