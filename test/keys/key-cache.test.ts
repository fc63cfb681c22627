// The embedded database's key cache (src/keys/authenticate.ts): used when nothing changed, never
// once something did, and absent on PostgreSQL, where other instances write too. On PostgreSQL,
// protect and execute take the key from a hint that their own append checks (migration 012):
// one round trip, and every answer still as if the key had been read first.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db } from "../../src/db/index.ts";
import { bearer, execute, protect, setUsage } from "../helpers/customer.ts";
import { approve } from "../helpers/ops.ts";
import { call, expectErrorShape, signup, testService } from "../helpers/service.ts";

let db: Db;
let lookups = 0;
let epochChecks = 0;
let restore: () => void;

beforeAll(async () => {
  db = (await testService()).db;
  const query = db.query;
  // Counts the key lookups and epoch checks that reach the database (the coalescers call db.query
  // at call time).
  (db as { query: Db["query"] }).query = ((name: string, params?: readonly unknown[]) => {
    if (name === "keys/authenticate") lookups += (params?.[0] as unknown[]).length;
    if (name === "keys/epochs") epochChecks += (params?.[0] as unknown[]).length;
    return query.call(db, name, params);
  }) as Db["query"];
  restore = () => ((db as { query: Db["query"] }).query = query);
});
afterAll(() => restore());

const simulate = (secret: string) => call("POST", "/v1/simulate", { json: { preset: "small_payment" }, headers: { "x-api-key": secret } });
const keyOf = async (token: string) => (await call("GET", "/customer/keys", { headers: bearer(token) })).body.keys[0].key_id as string;

describe("the key cache", () => {
  test("embedded: repeated requests with one key read it once; on PostgreSQL, the key once and then its tenant's epoch every time", async () => {
    const a = await signup();
    expect((await simulate(a.apiKey)).status).toBe(200);
    const [lookupsBefore, checksBefore] = [lookups, epochChecks];
    for (let i = 0; i < 10; i++) expect((await simulate(a.apiKey)).status).toBe(200);
    expect(lookups - lookupsBefore).toBe(0);
    expect(epochChecks - checksBefore).toBe(db.kind === "embedded" ? 0 : 10);
  });

  test("a customer's session and key list leave the cached keys in place; a key created does not", async () => {
    const a = await signup();
    expect((await simulate(a.apiKey)).status).toBe(200);
    const before = lookups;
    expect((await call("GET", "/customer/keys", { headers: bearer(a.token) })).status).toBe(200);
    expect((await simulate(a.apiKey)).status).toBe(200);
    expect(lookups - before).toBe(0); // on PostgreSQL the epoch, checked every time, stood for it
    // Any other statement counts as a change: the next request reads its key again (embedded).
    expect((await call("POST", "/customer/keys", { json: { label: "second" }, headers: bearer(a.token) })).status).toBe(201);
    expect((await simulate(a.apiKey)).status).toBe(200);
    expect(lookups - before).toBe(db.kind === "embedded" ? 1 : 0);
  });

  test("a protect refused by the daily quota leaves the cached key in place", async () => {
    const a = await signup();
    await setUsage(a.tenantId, 1000, 0); // the free plan's 1,000 protects a day
    expectErrorShape(await protect(a.apiKey), 429, "quota_exceeded");
    const before = lookups;
    for (let i = 0; i < 3; i++) {
      const refused = await protect(a.apiKey);
      expectErrorShape(refused, 429, "quota_exceeded");
      expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    }
    expect(lookups - before).toBe(0);
  });

  test("a revoke is refused on the very next request, also when it ran during a lookup (20 rounds)", async () => {
    for (let round = 0; round < 20; round++) {
      const a = await signup();
      const keyId = await keyOf(a.token);
      expect((await simulate(a.apiKey)).status).toBe(200); // cached now (embedded)
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
});

describe("hints for protect and execute (PostgreSQL; the embedded database answers the same from its cache)", () => {
  test("after the first request, protects and executes read no key: their appends check it", async () => {
    const a = await signup();
    expect((await protect(a.apiKey)).status).toBe(200);
    const [lookupsBefore, checksBefore] = [lookups, epochChecks];
    for (let i = 0; i < 3; i++) {
      const decided = await protect(a.apiKey);
      expect(decided.status).toBe(200);
      expect((await execute(a.apiKey, decided.body.receipt_id)).status).toBe(200);
    }
    expect([lookups - lookupsBefore, epochChecks - checksBefore]).toEqual([0, 0]);
    // An Idempotency-Key is claimed before the append, so such a request checks its key first.
    expect((await protect(a.apiKey, undefined, { headers: { "idempotency-key": `hint-${Date.now()}` } })).status).toBe(200);
    expect([lookups - lookupsBefore, epochChecks - checksBefore]).toEqual([0, db.kind === "embedded" ? 0 : 1]);
  });

  test("a revoked key's hinted request gets 401 key_revoked whatever else is wrong with it", async () => {
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

  test("an operator's catalog change is seen by the next hinted protect", async () => {
    const a = await signup();
    expect((await protect(a.apiKey)).status).toBe(200);
    try {
      await db.query("test/feature_set", ["protect", "pro", "self_serve"]);
      expectErrorShape(await protect(a.apiKey), 403, "plan_required");
    } finally {
      await db.query("test/feature_set", ["protect", "free", "self_serve"]);
    }
    expect((await protect(a.apiKey)).status).toBe(200);
  });
});
