// GET /customer/dashboard, and what an approval changes: limits rise the same second.
import { describe, expect, test } from "bun:test";
import { approve } from "../helpers/ops.ts";
import { call, expectErrorShape, signup, testService } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

const jwt = (token: string) => ({ authorization: `Bearer ${token}` });
const dashboard = async (token: string) => (await call("GET", "/customer/dashboard", { headers: jwt(token) })).body;
const protect = (apiKey: string) => call("POST", "/v1/protect", { json: { action: "document.read", resource: "docs/a" }, headers: { "x-api-key": apiKey } });

describe("GET /customer/dashboard", () => {
  test("a new tenant: zero usage, free limits, one active key, no pending upgrade, 14 zero days", async () => {
    const user = await signup();
    const d = await dashboard(user.token);
    expect(d).toMatchObject({
      ok: true,
      plan: "free",
      usage: { protect_today: 0, execute_today: 0, receipts_stored: 0 },
      limits: { protect_per_day: 1000, execute_per_day: 100, receipts_stored: 1000 },
      keys_active: 1,
      pending_upgrade: null,
    });
    expect(d.history).toHaveLength(14);
    expect(d.history.at(-1).day).toBe(new Date().toISOString().slice(0, 10));
    expect(d.history.every((h: { protect: number; execute: number }) => h.protect === 0 && h.execute === 0)).toBe(true);
  });

  test("counts protect, execute, stored receipts, keys and the pending request", async () => {
    const user = await signup();
    const first = await protect(user.apiKey);
    await protect(user.apiKey);
    expect((await call("POST", "/v1/execute", { json: { receipt_id: first.body.receipt_id }, headers: { "x-api-key": user.apiKey } })).status).toBe(200);
    await call("POST", "/customer/keys", { json: { label: "second" }, headers: jwt(user.token) });
    const upgrade = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "more" }, headers: jwt(user.token) })).body;
    const d = await dashboard(user.token);
    expect(d.usage).toEqual({ protect_today: 2, execute_today: 1, receipts_stored: 3 });
    expect(d.keys_active).toBe(2);
    expect(d.pending_upgrade).toEqual({ request_id: upgrade.request_id, requested_plan: "pro", created_at: upgrade.created_at });
    expect(d.history.at(-1)).toMatchObject({ protect: 2, execute: 1 });
  });

  test("another tenant's usage never shows", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    await protect(a.apiKey);
    expect((await dashboard(b.token)).usage.protect_today).toBe(0);
  });
});

describe("approval raises limits at once", () => {
  test("a tenant at its free protect quota can protect again right after approval", async () => {
    const user = await signup();
    const { db } = await testService();
    // Today's counter at the free limit, as if 1,000 calls had been made.
    await testQuery(db, "usage_set", [user.tenantId, new Date().toISOString().slice(0, 10), 1000, 0]);
    const refused = await protect(user.apiKey);
    expectErrorShape(refused, 429, "quota_exceeded");
    expect(refused.body.limit).toBe("protect_per_day");
    const upgrade = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "hit the limit" }, headers: jwt(user.token) })).body;
    await approve(upgrade.request_id);
    const allowed = await protect(user.apiKey);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("ratelimit-limit")).toBe("5000");
    expect(allowed.headers.get("ratelimit-remaining")).toBe("3999");
    const d = await dashboard(user.token);
    expect(d).toMatchObject({ plan: "pro", limits: { protect_per_day: 5000, execute_per_day: 500, receipts_stored: 10000 }, pending_upgrade: null });
    // Keys, receipts and policy are kept.
    expect(d.keys_active).toBe(1);
    expect(d.usage.receipts_stored).toBe(1);
    expect((await call("GET", "/customer/policy", { headers: jwt(user.token) })).status).toBe(200);
  });

  test("a pro feature unlocks at approval: PUT /customer/policy", async () => {
    const user = await signup();
    const current = (await call("GET", "/customer/policy", { headers: jwt(user.token) })).body;
    const put = () => call("PUT", "/customer/policy", { json: { document: current.document }, headers: jwt(user.token) });
    const before = await put();
    expectErrorShape(before, 403, "plan_required");
    expect(before.body.required_plan).toBe("pro");
    const upgrade = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "policy" }, headers: jwt(user.token) })).body;
    await approve(upgrade.request_id);
    expect((await put()).status).toBe(200);
  });
});
