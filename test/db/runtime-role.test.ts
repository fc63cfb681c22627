// PostgreSQL only: the service runs as a member of warden_runtime (sql/schema/99_runtime_role.sql),
// not as the owner of its tables. That role cannot rewrite receipts or policy versions, switch a
// trigger off, truncate or run DDL, and the whole service still works under it.
//
// On the embedded database there is one (superuser) role and nothing to separate: skipped, saying so.
import { afterAll, describe, expect, test } from "bun:test";
import { createService, type Service } from "../../src/app/service.ts";
import { DbError, openDb, type Db } from "../../src/db/index.ts";
import { createLogger } from "../../src/log.ts";
import { apiKey, bearer, SMALL_PAYMENT } from "../helpers/customer.ts";
import { call, signup, testConfig, testService, uniqueEmail, GOOD_PASSWORD } from "../helpers/service.ts";
import { addGateway, grantWithTokens } from "../helpers/oauth.ts";
import { testQuery } from "../helpers/sql.ts";

const DATABASE_URL = process.env.TEST_DATABASE_URL;

test("the runtime-role tests need PostgreSQL", () => {
  if (!DATABASE_URL) console.warn("SKIPPED: runtime role tests run on PostgreSQL only (set TEST_DATABASE_URL); the embedded database has a single superuser role");
});

describe.skipIf(!DATABASE_URL)("the service's runtime role on PostgreSQL", async () => {
  // Bun still runs a skipped describe's body to collect its tests: nothing to set up without a server.
  if (!DATABASE_URL) return;
  // The owner (the test database's URL) has applied the baseline; the runtime login is a member of warden_runtime.
  const { db: owner } = await testService();
  await testQuery(owner, "runtime_login_role");
  const url = new URL(DATABASE_URL!);
  url.username = "warden_test_runtime";
  url.password = "";
  const runtime: Db = await openDb({ databaseUrl: url.toString(), dataDir: "memory://", poolSize: 4 });
  const service: Service = await createService(testConfig(), { db: runtime, log: createLogger("error", () => {}) });
  afterAll(async () => {
    await service.close();
    await runtime.close();
  });

  const refused = async (name: string, params: unknown[] = []) => {
    const err = await testQuery(runtime, name, params).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(DbError);
    // 42501 insufficient_privilege: refused by the grants, before any trigger runs.
    expect((err as DbError).sqlstate).toBe("42501");
  };

  test("cannot UPDATE or DELETE receipts, disable their trigger, truncate them, or touch policy versions", async () => {
    const user = await signup();
    const receipt = (await call("POST", "/v1/protect", { json: SMALL_PAYMENT, headers: apiKey(user.apiKey) })).body.receipt_id as string;
    await refused("receipt_update", [receipt]);
    await refused("receipt_delete", [receipt]);
    await refused("receipts_guard_off");
    await refused("receipts_truncate");
    await refused("policy_update", [user.tenantId, 1]);
    await refused("policy_delete", [user.tenantId, 1]);
    await refused("runtime_create_table");
  });

  test("OAuth: the whole token life runs as the runtime role, which cannot delete a token nor revive a grant", async () => {
    const user = await signup();
    const gw = await addGateway(user.tenantId);
    const first = await grantWithTokens(gw, user.memberId, { service });
    const tokens = service.deps.accessTokens;
    expect(await tokens.verify(first.access_token, gw.resource)).not.toBeNull();
    const second = await tokens.refresh(first.refresh_token, { clientId: "cli_test", resource: null, requestId: "r" });
    expect(second.ok).toBe(true);
    expect(await tokens.refresh(first.refresh_token, { clientId: "cli_test", resource: null, requestId: "r" })).toMatchObject({ ok: false, reason: "reused" });
    await refused("oauth_tokens_delete", [user.tenantId, first.grant_id]);
    const err = await testQuery(owner, "oauth_grant_reactivate", [user.tenantId, first.grant_id]).then(() => undefined, (e: unknown) => e);
    expect((err as DbError).sqlstate).toBe("WO001");
  });

  test("cannot UPDATE or DELETE an audit event, nor an operator's queued event beyond marking it appended", async () => {
    const user = await signup();
    await call("POST", "/customer/keys", { json: { label: "audited" }, headers: bearer(user.token) });
    const event = (await call("GET", "/customer/audit", { headers: bearer(user.token) })).body.events[0].receipt_id as string;
    await refused("receipt_update", [event]);
    await refused("receipt_delete", [event]);
    await testQuery(owner, "audit_outbox_add", [user.tenantId, "feature.granted", "ops-alice", { feature: "sso" }]);
    const [queued] = await testQuery<{ id: number }>(runtime, "audit_outbox_rows", [user.tenantId]);
    await refused("audit_outbox_update", [queued.id]);
    await refused("audit_outbox_delete", [queued.id]);
    // What the service's worker needs, and nothing more: queue (an operator's procedure) and mark appended.
    expect(await testQuery(owner, "audit_outbox_privileges")).toEqual([
      { insert: true, delete: false, update_receipt_id: true, update_appended_at: true, update_operator: false, update_target: false },
    ]);
  });

  test("cannot delete webhook endpoints or their deliveries, nor change what an endpoint is; the webhook routes and the worker's writes work", async () => {
    const user = await signup();
    const as = { service };
    const jwt = bearer(user.token);
    const made = await call("POST", "/customer/webhooks", { json: { url: "https://93.184.215.14/rt", events: ["*"] }, headers: jwt, ...as });
    expect(made.status).toBe(201);
    const id = made.body.webhook_id as string;
    expect((await call("POST", `/customer/webhooks/${id}/rotate-secret`, { headers: jwt, ...as })).status).toBe(200);
    const queued = await call("POST", `/customer/webhooks/${id}/test`, { headers: jwt, ...as });
    expect(queued.status).toBe(202);
    expect((await call("GET", `/customer/webhooks/${id}/deliveries`, { headers: jwt, ...as })).body.deliveries).toHaveLength(1);
    await refused("webhook_delete_raw", [id]);
    await refused("webhook_set_url", [id, "https://93.184.215.15/elsewhere"]);
    await refused("webhook_delivery_delete", [queued.body.delivery_id]);
    await refused("webhook_delivery_update", [queued.body.delivery_id, "approval.denied"]);
    expect(await testQuery(owner, "webhook_privileges")).toEqual([
      { delete_webhook: false, delete_delivery: false, update_url: false, update_events: false, update_tenant: false, update_status: true, update_secret: true, update_delivery_event: false, update_delivery_status: true },
    ]);
    // What the delivery worker writes: an attempt's status code, a disable (a 410) and its failed deliveries.
    const [row] = await testQuery<{ id: number }>(runtime, "webhook_outbox", [id]);
    expect(await runtime.query("webhooks/attempted", [user.tenantId, row!.id, 410])).toEqual([{ recorded: true }]);
    expect(await runtime.query("webhooks/disable", [user.tenantId, id, "the endpoint answered 410 Gone", row!.id])).toEqual([{ disabled: true }]);
    expect((await call("DELETE", `/customer/webhooks/${id}`, { headers: jwt, ...as })).status).toBe(200);
  });

  test("the whole service works under it", async () => {
    const as = { service };
    const email = uniqueEmail("runtime");
    const created = await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD }, ...as });
    expect(created.status).toBe(201);
    const jwt = bearer(created.body.token);
    const key = apiKey(created.body.api_key);
    expect((await call("POST", "/auth/login", { json: { email, password: GOOD_PASSWORD }, ...as })).status).toBe(200);
    const newKey = await call("POST", "/customer/keys", { json: { label: "rt" }, headers: { ...jwt, "idempotency-key": "rt-1" }, ...as });
    expect(newKey.status).toBe(201);
    expect((await call("POST", "/customer/keys", { json: { label: "rt" }, headers: { ...jwt, "idempotency-key": "rt-1" }, ...as })).text).toBe(newKey.text);
    expect((await call("GET", "/customer/keys", { headers: jwt, ...as })).body.keys).toHaveLength(2);
    const rotated = await call("POST", `/customer/keys/${newKey.body.key_id}/rotate`, { headers: jwt, ...as });
    expect(rotated.status).toBe(201);
    expect((await call("POST", `/customer/keys/${rotated.body.key_id}/revoke`, { headers: jwt, ...as })).status).toBe(200);

    const protect = await call("POST", "/v1/protect", { json: SMALL_PAYMENT, headers: { ...key, "idempotency-key": "p-1" }, ...as });
    expect(protect.status).toBe(200);
    const executed = await call("POST", "/v1/execute", { json: { receipt_id: protect.body.receipt_id }, headers: key, ...as });
    expect(executed.status).toBe(200);
    expect((await call("POST", "/v1/verify", { json: { receipt: executed.body }, headers: key, ...as })).body.verified).toBe(true);
    expect((await call("POST", "/v1/simulate", { json: { preset: (await call("GET", "/v1/presets", as)).body.presets[0].preset }, headers: key, ...as })).status).toBe(200);
    // The two decisions, and the events of the key's creation, rotation and revocation, after the
    // signup's own key.created.
    expect((await call("GET", "/customer/receipts", { headers: jwt, ...as })).body.receipts.map((r: { kind: string }) => r.kind)).toEqual(["execute", "protect", "event", "event", "event", "event"]);
    expect((await call("GET", "/customer/audit", { headers: jwt, ...as })).body.events).toHaveLength(4);
    expect((await call("GET", `/customer/receipts/${protect.body.receipt_id}`, { headers: jwt, ...as })).status).toBe(200);
    expect((await call("GET", `/customer/receipts/${protect.body.receipt_id}/proof`, { headers: jwt, ...as })).status).toBe(200);
    expect((await call("GET", "/customer/receipts/checkpoint", { headers: jwt, ...as })).status).toBe(200);
    expect((await call("GET", "/customer/receipts/consistency?from=1&to=2", { headers: jwt, ...as })).status).toBe(200);
    expect((await call("GET", "/customer/policy", { headers: jwt, ...as })).status).toBe(200);
    expect((await call("GET", "/customer/dashboard", { headers: jwt, ...as })).status).toBe(200);
    expect((await call("GET", "/customer/account", { headers: jwt, ...as })).status).toBe(200);
    const upgrade = await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "more" }, headers: jwt, ...as });
    expect(upgrade.status).toBe(201);
    expect((await call("POST", `/customer/upgrades/${upgrade.body.request_id}/cancel`, { headers: jwt, ...as })).status).toBe(200);
    expect((await call("POST", "/auth/verify-email/request", { json: {}, headers: jwt, ...as })).status).toBe(202);
    expect((await call("POST", "/auth/reset-password/request", { json: { email }, ...as })).status).toBe(202);
    expect((await call("POST", "/customer/account/password", { json: { current_password: GOOD_PASSWORD, new_password: "another quiet harbour" }, headers: jwt, ...as })).status).toBe(200);
    expect((await call("GET", "/health", as)).body.database).toBe("postgres");
  });
});
