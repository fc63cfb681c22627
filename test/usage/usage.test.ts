// Usage limits in policies (docs/policy.md, "Budgets and rate windows"): exact under concurrency,
// provable (the payload names the facts it read, and the decision verifies again), refused when
// malformed.
import { beforeAll, describe, expect, test } from "bun:test";
import { bearer } from "../helpers/accounts.ts";
import { protect, setPlan } from "../helpers/customer.ts";
import { call, expectErrorShape, signup, testService } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

const CAPPED = (limit: number, per: "tenant" | "key" = "tenant") => ({
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "email_cap", effect: "deny", reason: "too_many_emails", when: { actions: ["email.send"], usage: { sum: "count", per, window: "day", gt: limit } } },
    { id: "emails", effect: "allow", reason: "ok", when: { actions: ["email.send"] } },
    { id: "eur_budget", effect: "deny", reason: "daily_budget", when: { actions: ["payment.*"], currency: { eq: "EUR" }, usage: { sum: "amount", per: "key", window: "day", gt: 500 } } },
    { id: "payments", effect: "allow", reason: "ok", when: { actions: ["payment.*"] } },
  ],
});

async function tenantWith(document: unknown) {
  const t = await signup();
  await setPlan(t.tenantId, "pro");
  const reply = await call("PUT", "/customer/policy", { json: { document }, headers: bearer(t.token) });
  expect(reply.status).toBe(200);
  return t;
}

describe("a usage condition", () => {
  test("50 concurrent protects against a limit of 10 give exactly 10 ALLOWED", async () => {
    const t = await tenantWith(CAPPED(10));
    const replies = await Promise.all(Array.from({ length: 50 }, () => protect(t.apiKey, { action: "email.send" })));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(replies.filter((r) => r.body.decision === "ALLOWED")).toHaveLength(10);
    expect(replies.filter((r) => r.body.reasons[0] === "too_many_emails")).toHaveLength(40);
  });

  test("a counter that moved behind this instance's back (as another instance's appends move it) is never decided on", async () => {
    const t = await tenantWith(CAPPED(10));
    const { service } = await testService();
    for (let i = 0; i < 5; i++) expect((await protect(t.apiKey, { action: "email.send" })).body.payload.usage[0].before).toBe(i);
    // The instance last saw 5; the stored counter now holds 10.
    expect(await testQuery(service.deps.db, "usage_counters_bump", [t.tenantId, 5])).toEqual([{ total: "10" }]);
    const next = await protect(t.apiKey, { action: "email.send" });
    expect(next.body.decision).toBe("DENIED");
    expect(next.body.payload.usage[0].before).toBe(10);
    // Concurrent requests after another move: each decided on the stored total.
    await testQuery(service.deps.db, "usage_counters_bump", [t.tenantId, 1]);
    const burst = await Promise.all(Array.from({ length: 10 }, () => protect(t.apiKey, { action: "email.send" })));
    expect(burst.map((r) => [r.body.decision, r.body.payload.usage[0].before])).toEqual(burst.map(() => ["DENIED", 11]));
  });

  test("totals that prove stale at every try are read under the lock, and the decision is still exact", async () => {
    const t = await tenantWith(CAPPED(3));
    const { service } = await testService();
    for (let i = 0; i < 2; i++) expect((await protect(t.apiKey, { action: "email.send" })).body.decision).toBe("ALLOWED");
    // This instance now reads every counter as 0 (as if another instance kept moving them).
    const limits = service.deps.usageLimits as unknown as { counters: Map<string, string>; peeks: { submit: (ref: unknown) => Promise<string> } };
    const peek = limits.peeks.submit;
    limits.peeks.submit = async () => "0";
    limits.counters.clear();
    try {
      const replies = await Promise.all(Array.from({ length: 4 }, () => protect(t.apiKey, { action: "email.send" })));
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(replies.map((r) => [r.body.decision, r.body.payload.usage[0].before])).toEqual([["ALLOWED", 2], ["DENIED", 3], ["DENIED", 3], ["DENIED", 3]]);
    } finally {
      limits.peeks.submit = peek;
    }
  });

  test("a protect under a usage rule goes through when the signing key is due for a reload", async () => {
    const t = await tenantWith(CAPPED(5));
    const { service } = await testService();
    (service.deps.signer as unknown as { loadedAt: number }).loadedAt = 0;
    expect((await protect(t.apiKey, { action: "email.send" })).body.decision).toBe("ALLOWED");
  });

  test("the payload names the facts it read, and the decision verifies again under them", async () => {
    const t = await tenantWith(CAPPED(2));
    const first = await protect(t.apiKey, { action: "email.send" });
    const second = await protect(t.apiKey, { action: "email.send" });
    const third = await protect(t.apiKey, { action: "email.send" });
    const day = `${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`;
    expect(first.body.payload.usage).toEqual([{ rule: "email_cap", window_start: day, before: 0 }]);
    expect(second.body.payload.usage).toEqual([{ rule: "email_cap", window_start: day, before: 1 }]);
    expect(third.body.decision).toBe("DENIED");
    expect(third.body.payload.usage).toEqual([{ rule: "email_cap", window_start: day, before: 2 }]);
    for (const r of [first.body, second.body, third.body]) {
      const v = await call("POST", "/v1/verify", { json: { receipt: r }, headers: { "x-api-key": t.apiKey } });
      expect(v.body.checks).toEqual({ content_hash: true, signature: true, decision: true, stored: true });
    }
    // A fact changed: the content hash breaks; a payload re-signed with other facts would decide otherwise.
    const forged = structuredClone(third.body);
    forged.payload.usage[0].before = 0;
    expect((await call("POST", "/v1/verify", { json: { receipt: forged }, headers: { "x-api-key": t.apiKey } })).body.verified).toBe(false);
  });

  test("a sum over amount per key: 500 EUR a day, and the other key counts apart; denied requests count nothing", async () => {
    const t = await tenantWith(CAPPED(100));
    const other = await call("POST", "/customer/keys", { json: { label: "second bot" }, headers: bearer(t.token) });
    const pay = (key: string, amount: number) => protect(key, { action: "payment.send", amount, currency: "EUR" });
    expect((await pay(t.apiKey, 300)).body.decision).toBe("ALLOWED");
    expect((await pay(t.apiKey, 250)).body.decision).toBe("DENIED");
    expect((await pay(t.apiKey, 200)).body.decision).toBe("ALLOWED");
    expect((await pay(t.apiKey, 1)).body.decision).toBe("DENIED");
    expect((await pay(other.body.secret, 500)).body.decision).toBe("ALLOWED");
  });

  test("bad input: no bound, an unknown window or measure, a sum over amount without a currency eq", async () => {
    const t = await signup();
    await setPlan(t.tenantId, "pro");
    const rule = (usage: unknown, extra: Record<string, unknown> = {}) => ({ default_effect: "deny", default_reason: "x", rules: [{ id: "r", effect: "deny", reason: "x", when: { actions: ["a"], usage, ...extra } }] });
    const refused = async (doc: unknown, path: string) => {
      const reply = await call("PUT", "/customer/policy", { json: { document: doc }, headers: bearer(t.token) });
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.body.message).toStartWith(path);
    };
    await refused(rule({ sum: "count", per: "key", window: "day" }), "body/document/rules/0/when/usage");
    await refused(rule({ sum: "count", per: "key", window: "week", gt: 1 }), "body/document/rules/0/when/usage/window");
    await refused(rule({ sum: "calls", per: "key", window: "day", gt: 1 }), "body/document/rules/0/when/usage/sum");
    await refused(rule({ sum: "amount", per: "key", window: "day", gt: 1 }), "body/document/rules/0/when/usage/sum");
    await refused(rule({ sum: "amount", per: "key", window: "day", gt: 1 }, { currency: { in: ["EUR", "USD"] } }), "body/document/rules/0/when/usage/sum");
  });
});

describe("seen and simulated", () => {
  test("GET /customer/usage shows each limit's use in the current window; simulate shows what it read and counts nothing", async () => {
    const t = await tenantWith(CAPPED(3));
    for (let i = 0; i < 2; i++) await protect(t.apiKey, { action: "email.send" });
    await protect(t.apiKey, { action: "payment.send", amount: 120, currency: "EUR" });
    const before = await call("GET", "/customer/usage", { headers: bearer(t.token) });
    expect(before.body.limits.map((l: { rule: string; usage: unknown }) => [l.rule, l.usage])).toEqual([
      ["email_cap", [{ key_id: null, total: 2 }]],
      ["eur_budget", [{ key_id: expect.stringMatching(/^key_/), total: 120 }]],
    ]);
    expect(before.body.limits[1]).toMatchObject({ sum: "amount", per: "key", window: "day", bound: { gt: 500 }, currency: "EUR" });
    for (let i = 0; i < 3; i++) {
      const sim = await call("POST", "/v1/simulate", { json: { input: { action: "email.send" } }, headers: { "x-api-key": t.apiKey } });
      expect(sim.body.decision).toBe("ALLOWED");
      expect(sim.body.payload.usage[0].before).toBe(2);
    }
    const after = await call("GET", "/customer/usage", { headers: bearer(t.token) });
    expect(after.body.limits[0].usage).toEqual([{ key_id: null, total: 2 }]);
  });

  test("a policy test case may set a starting usage", async () => {
    const t = await tenantWith(CAPPED(3));
    const cases = [
      { name: "fresh", input: { action: "email.send" }, expect: { decision: "ALLOWED" } },
      { name: "at the cap", input: { action: "email.send" }, usage: { email_cap: 3 }, expect: { decision: "DENIED", reason: "too_many_emails" } },
    ];
    const reply = await call("POST", "/customer/policy/test", { json: { cases }, headers: bearer(t.token) });
    expect(reply.body).toMatchObject({ passed: 2, failed: 0 });
  });

  test("impact replays the recorded traffic in order under a draft's lower budget", async () => {
    const t = await tenantWith(CAPPED(100));
    for (let i = 0; i < 5; i++) expect((await protect(t.apiKey, { action: "email.send" })).body.decision).toBe("ALLOWED");
    const reply = await call("POST", "/customer/policy/impact", { json: { document: CAPPED(2) }, headers: bearer(t.token) });
    expect(reply.body).toMatchObject({ evaluated: 5, allowed_to_denied: 3, unchanged: 2 });
  });
});
