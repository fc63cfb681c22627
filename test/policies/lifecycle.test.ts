// Policy versions, restore, test runs, the stored suite that gates publishing, and the cap on
// stored versions (docs/api.md, Policy).
import { describe, expect, test } from "bun:test";
import { DEFAULT_POLICY } from "../../src/decide/policy.ts";
import { bearer, setPlan } from "../helpers/customer.ts";
import { call, expectErrorShape, signup, testService } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

const get = (token: string, path: string) => call("GET", path, { headers: bearer(token) });
const send = (method: string, token: string, path: string, json?: unknown) => call(method, path, { json, headers: bearer(token) });
const publish = (token: string, document: unknown) => send("PUT", token, "/customer/policy", { document });

const doc = (reason: string, rules: unknown[] = []) => ({ default_effect: "deny", default_reason: reason, rules });
const PAYMENTS_OK = doc("closed", [{ id: "pay", effect: "allow", reason: "payments_ok", when: { actions: ["payment.*"] } }]);
const PAY_CASE = { name: "small payment allowed", input: { action: "payment.send", amount: 5, currency: "USD" }, expect: { decision: "ALLOWED" } };

async function proTenant() {
  const a = await signup();
  await setPlan(a.tenantId, "pro");
  return a;
}

describe("GET /customer/policy/versions", () => {
  test("newest first, version 1 (the built-in default) last, paginated by cursor", async () => {
    const a = await proTenant();
    for (const reason of ["one", "two", "three"]) expect((await publish(a.token, doc(reason))).status).toBe(200);
    const all = await get(a.token, "/customer/policy/versions");
    expect(all.status).toBe(200);
    expect(all.body.versions.map((v: { version: number }) => v.version)).toEqual([4, 3, 2, 1]);
    expect(all.body.versions[3]).toMatchObject({ version: 1, rules: DEFAULT_POLICY.rules.length });
    expect(all.body.versions[0]).toMatchObject({ version: 4, rules: 0 });
    expect(all.body.next_cursor).toBe(null);

    const first = await get(a.token, "/customer/policy/versions?limit=3");
    expect(first.body.versions.map((v: { version: number }) => v.version)).toEqual([4, 3, 2]);
    const second = await get(a.token, `/customer/policy/versions?limit=3&cursor=${first.body.next_cursor}`);
    expect(second.body.versions.map((v: { version: number }) => v.version)).toEqual([1]);
    expect(second.body.next_cursor).toBe(null);
    expectErrorShape(await get(a.token, "/customer/policy/versions?cursor=nope"), 400, "invalid_request");
    expectErrorShape(await get(a.token, "/customer/policy/versions?limit=0"), 400, "invalid_request");
  });

  test("a free tenant sees its one version", async () => {
    const a = await signup();
    const reply = await get(a.token, "/customer/policy/versions");
    expect(reply.body.versions).toHaveLength(1);
    expect(reply.body.versions[0].hash).toBe((await get(a.token, "/customer/policy")).body.hash);
  });
});

describe("GET /customer/policy/versions/{version}", () => {
  test("shows a version's document; other tenants' versions and odd shapes are 404", async () => {
    const [a, b] = await Promise.all([proTenant(), proTenant()]);
    const v2 = (await publish(a.token, PAYMENTS_OK)).body;
    const reply = await get(a.token, "/customer/policy/versions/2");
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ ok: true, policy_id: v2.policy_id, version: 2, hash: v2.hash, document: PAYMENTS_OK });
    expect(reply.body.created_at).toMatch(/Z$/);
    expect((await get(a.token, "/customer/policy/versions/1")).body).toMatchObject({ policy_id: "pol_default", version: 1, document: DEFAULT_POLICY });
    for (const path of ["2", "3", "0", "01", "abc", "99999999999", "-1"]) {
      expectErrorShape(await get(b.token, `/customer/policy/versions/${path}`), 404, "not_found");
    }
    expectErrorShape(await get(a.token, "/customer/policy/versions/3"), 404, "not_found");
  });
});

describe("POST /customer/policy/versions/{version}/restore", () => {
  test("publishes that version's document as a new version", async () => {
    const a = await proTenant();
    await publish(a.token, PAYMENTS_OK);
    await publish(a.token, doc("later"));
    const restored = await send("POST", a.token, "/customer/policy/versions/2/restore");
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ version: 4, document: PAYMENTS_OK });
    expect((await get(a.token, "/customer/policy")).body.version).toBe(4);
    const builtIn = await send("POST", a.token, "/customer/policy/versions/1/restore");
    expect(builtIn.body).toMatchObject({ version: 5, document: DEFAULT_POLICY });
    expectErrorShape(await send("POST", a.token, "/customer/policy/versions/9/restore"), 404, "not_found");
  });

  test("a retry with the same Idempotency-Key gets the first answer, not another version", async () => {
    const a = await proTenant();
    await publish(a.token, PAYMENTS_OK);
    const restore = (version: number, key: string) =>
      call("POST", `/customer/policy/versions/${version}/restore`, { headers: { ...bearer(a.token), "idempotency-key": key } });
    const first = await restore(1, "restore-once");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ version: 3, document: DEFAULT_POLICY });
    const retry = await restore(1, "restore-once");
    expect([retry.status, retry.text, retry.headers.get("idempotent-replayed")]).toEqual([200, first.text, "true"]);
    expect((await get(a.token, "/customer/policy/versions")).body.versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    // The same key on another version's restore is another request.
    expectErrorShape(await restore(2, "restore-once"), 422, "idempotency_mismatch");
    expect((await restore(2, "restore-twice")).body).toMatchObject({ version: 4, document: PAYMENTS_OK });
  });

  test("free plan: 403 plan_required", async () => {
    const a = await signup();
    const reply = await send("POST", a.token, "/customer/policy/versions/1/restore");
    expectErrorShape(reply, 403, "plan_required");
    expect(reply.body.required_plan).toBe("pro");
  });
});

describe("POST /customer/policy/test", () => {
  test("runs cases against a draft or the active version; nothing is stored", async () => {
    const a = await signup();
    const cases = [
      PAY_CASE,
      { name: "by reason and rule", input: { action: "payment.send", amount: 5000, currency: "USD" }, expect: { decision: "DENIED", reason: "amount_over_limit", rule: "deny_payment_over_limit" } },
      { name: "wrong rule", input: { action: "document.read" }, expect: { decision: "ALLOWED", rule: null } },
    ];
    const active = await send("POST", a.token, "/customer/policy/test", { cases });
    expect(active.status).toBe(200);
    expect(active.body).toEqual({
      ok: true,
      passed: 2,
      failed: 1,
      results: [
        { name: "small payment allowed", passed: true, decision: "ALLOWED", reason: "payment_within_limit", rule: "allow_payment_within_limit" },
        { name: "by reason and rule", passed: true, decision: "DENIED", reason: "amount_over_limit", rule: "deny_payment_over_limit" },
        { name: "wrong rule", passed: false, decision: "ALLOWED", reason: "read_only", rule: "allow_document_read" },
      ],
    });
    const draft = await send("POST", a.token, "/customer/policy/test", { document: PAYMENTS_OK, cases });
    expect(draft.body).toMatchObject({ passed: 1, failed: 2 });
    expect(draft.body.results[1]).toEqual({ name: "by reason and rule", passed: false, decision: "ALLOWED", reason: "payments_ok", rule: "pay" });
    expect((await get(a.token, "/customer/policy")).body.version).toBe(1);
    expect((await get(a.token, "/customer/policy/tests")).body.cases).toEqual([]);
  });

  test("a case's key_id meets keys conditions", async () => {
    const a = await signup();
    const document = doc("closed", [{ id: "bot1", effect: "allow", reason: "bot1_ok", when: { keys: ["key_bot1"] } }]);
    const cases = [
      { name: "bot1", input: { action: "x" }, key_id: "key_bot1", expect: { decision: "ALLOWED", rule: "bot1" } },
      { name: "bot2", input: { action: "x" }, key_id: "key_bot2", expect: { decision: "DENIED", rule: null } },
      { name: "no key", input: { action: "x" }, expect: { decision: "DENIED" } },
    ];
    expect((await send("POST", a.token, "/customer/policy/test", { document, cases })).body).toMatchObject({ passed: 3, failed: 0 });
  });

  test("bad bodies: 400 invalid_request naming the path; more than 500 cases refused", async () => {
    const a = await signup();
    const bad: [unknown, RegExp][] = [
      [{ cases: [{ ...PAY_CASE, expect: { decision: "MAYBE" } }] }, /cases\/0\/expect\/decision/],
      [{ cases: [{ ...PAY_CASE, extra: 1 }] }, /cases\/0/],
      [{ document: doc("x", [{ id: "r", effect: "allow", reason: "r", when: { amount: { eq: "5" } } }]), cases: [] }, /document\/rules\/0\/when\/amount/],
      [{ cases: Array.from({ length: 501 }, () => PAY_CASE) }, /cases/],
      [{}, /cases/],
    ];
    for (const [json, where] of bad) {
      const reply = await send("POST", a.token, "/customer/policy/test", json);
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.body.message).toMatch(where);
    }
  });
});

describe("the stored suite gates publishing", () => {
  test("PUT /customer/policy/tests stores the suite; a publish under which a case fails is 422 and publishes nothing", async () => {
    const a = await proTenant();
    const stored = await send("PUT", a.token, "/customer/policy/tests", { cases: [PAY_CASE] });
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual({ ok: true, cases: [PAY_CASE] });
    expect((await get(a.token, "/customer/policy/tests")).body).toEqual({ ok: true, cases: [PAY_CASE] });

    const refused = await publish(a.token, doc("closed"));
    expectErrorShape(refused, 422, "policy_tests_failed");
    expect(refused.body.results).toEqual([{ name: "small payment allowed", passed: false, decision: "DENIED", reason: "closed", rule: null }]);
    expect((await get(a.token, "/customer/policy")).body.version).toBe(1);

    expect((await publish(a.token, PAYMENTS_OK)).body.version).toBe(2);
    // Restore runs the suite too.
    const restore = await send("POST", a.token, "/customer/policy/versions/1/restore");
    expect(restore.status).toBe(200);
    await send("PUT", a.token, "/customer/policy/tests", { cases: [{ ...PAY_CASE, expect: { decision: "ALLOWED", rule: "pay" } }] });
    expectErrorShape(await send("POST", a.token, "/customer/policy/versions/1/restore"), 422, "policy_tests_failed");
    expect((await get(a.token, "/customer/policy")).body.version).toBe(3);
  });

  test("a suite replaced while a publish ran its tests: the new suite decides (422); one that keeps changing: 503", async () => {
    const a = await proTenant();
    const { db } = await testService();
    const one = db.one;
    // Between the publish's read of the suite and its statement (which runs in a transaction of its
    // own, with its audit event), another request replaces the suite (as often as `times`).
    const replaceSuiteBeforePublish = (times: number, cases: (round: number) => unknown[]) => {
      let round = 0;
      (db as { one: typeof db.one }).one = (async (name: string, params?: readonly unknown[]) => {
        const row = await one(name as never, params as never);
        if (name === "policies/tests_get" && params?.[0] === a.tenantId && round < times) {
          await one("policies/tests_put", [a.tenantId, JSON.stringify(cases(round++))]);
        }
        return row;
      }) as typeof db.one;
    };
    try {
      const failing = { ...PAY_CASE, expect: { decision: "ALLOWED", rule: "some_other_rule" } };
      replaceSuiteBeforePublish(1, () => [failing]);
      const refused = await publish(a.token, PAYMENTS_OK);
      expectErrorShape(refused, 422, "policy_tests_failed");
      expect(refused.body.results).toEqual([{ name: PAY_CASE.name, passed: false, decision: "ALLOWED", reason: "payments_ok", rule: "pay" }]);
      expect((await get(a.token, "/customer/policy")).body.version).toBe(1);

      expect((await send("PUT", a.token, "/customer/policy/tests", { cases: [PAY_CASE] })).status).toBe(200);
      replaceSuiteBeforePublish(3, (round) => [{ ...PAY_CASE, name: `round ${round}` }]);
      const busy = await publish(a.token, PAYMENTS_OK);
      expectErrorShape(busy, 503, "unavailable");
      expect(busy.headers.get("retry-after")).toBe("1");
      expect((await get(a.token, "/customer/policy")).body.version).toBe(1);
    } finally {
      (db as { one: typeof db.one }).one = one;
    }
    // Once the suite holds still, the same publish goes through.
    expect((await publish(a.token, PAYMENTS_OK)).body.version).toBe(2);
  });

  test("the suite is the tenant's own; writing it needs custom_policy", async () => {
    const [a, b] = await Promise.all([proTenant(), signup()]);
    await send("PUT", a.token, "/customer/policy/tests", { cases: [PAY_CASE] });
    expect((await get(b.token, "/customer/policy/tests")).body.cases).toEqual([]);
    const refused = await send("PUT", b.token, "/customer/policy/tests", { cases: [PAY_CASE] });
    expectErrorShape(refused, 403, "plan_required");
    expect((await get(b.token, "/customer/policy/tests")).body.cases).toEqual([]);
  });
});

describe("the cap on stored versions", () => {
  test("a tenant stores at most 1000 custom versions: then 429 quota_exceeded, limit policy_versions", async () => {
    const a = await proTenant();
    const { db } = await testService();
    expect(await testQuery(db, "policy_fill", [a.tenantId, 1000])).toHaveLength(999);
    expect((await publish(a.token, PAYMENTS_OK)).body.version).toBe(1001);
    const refused = await publish(a.token, doc("one_too_many"));
    expectErrorShape(refused, 429, "quota_exceeded");
    expect(refused.body.limit).toBe("policy_versions");
    expectErrorShape(await send("POST", a.token, "/customer/policy/versions/2/restore"), 429, "quota_exceeded");
    expect((await get(a.token, "/customer/policy")).body.version).toBe(1001);
  });
});

describe("auth", () => {
  test("every route needs a session", async () => {
    const routes: [string, string][] = [
      ["GET", "/customer/policy/versions"],
      ["GET", "/customer/policy/versions/1"],
      ["POST", "/customer/policy/versions/1/restore"],
      ["POST", "/customer/policy/test"],
      ["GET", "/customer/policy/tests"],
      ["PUT", "/customer/policy/tests"],
      ["POST", "/customer/policy/impact"],
    ];
    for (const [method, path] of routes) {
      const reply = await call(method, path, method === "GET" ? {} : { json: {} });
      expectErrorShape(reply, 401, "unauthorized");
    }
  });
});
