// /customer/webhooks through HTTP, as a client uses it: endpoints created (the URL checked, the
// secret shown once and kept sealed), listed, rotated, deleted, tested, their deliveries paged;
// bad input, unknown and foreign ids, the cap of 10; the audit trail's events; webhook_emit()
// fanning an event out to the subscribed endpoints. Deliveries over the wire: delivery.test.ts.
import { describe, expect, test } from "bun:test";
import { SEALED_FORMAT } from "../../src/crypto/secret-box.ts";
import { bearer } from "../helpers/customer.ts";
import { call, expectErrorShape, signup, testConfig, testService } from "../helpers/service.ts";
import { testOne, testQuery } from "../helpers/sql.ts";
import { withService } from "../helpers/webhooks.ts";
import { createService } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";

// A public address literal: the check needs no DNS, and this shared service delivers nothing.
const PUBLIC_URL = "https://93.184.215.14/hooks/warden";

type Row = Record<string, any>;

async function create(token: string, json: Record<string, unknown> = { url: PUBLIC_URL, events: ["*"] }) {
  return call("POST", "/customer/webhooks", { json, headers: bearer(token) });
}

async function created(token: string, json?: Record<string, unknown>): Promise<Row> {
  const reply = await create(token, json);
  if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${reply.text}`);
  return reply.body;
}

const row = async (webhookId: string) => testOne<Row>((await testService()).db, "webhook_row", [webhookId]);
const outbox = async (webhookId: string) => testQuery<Row>((await testService()).db, "webhook_outbox", [webhookId]);

async function auditEvents(token: string, event: string): Promise<Row[]> {
  const reply = await call("GET", `/customer/audit?event=${event}`, { headers: bearer(token) });
  expect(reply.status).toBe(200);
  return reply.body.events;
}

describe("creating and listing endpoints", () => {
  test("201 with the secret once; the list shows the endpoint without it; stored sealed, opening to the secret", async () => {
    const user = await signup();
    const reply = await create(user.token, { url: PUBLIC_URL, events: ["approval.requested", "approval.approved"], description: "approvals to the pager" });
    expect(reply.status).toBe(201);
    const body = reply.body;
    expect(body).toEqual({
      ok: true,
      webhook_id: expect.stringMatching(/^whk_[0-9A-Za-z]{22}$/),
      url: PUBLIC_URL,
      events: ["approval.requested", "approval.approved"],
      description: "approvals to the pager",
      status: "active",
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    const list = await call("GET", "/customer/webhooks", { headers: bearer(user.token) });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ ok: true, webhooks: [{ webhook_id: body.webhook_id, url: PUBLIC_URL, events: body.events, description: "approvals to the pager", status: "active", created_at: body.created_at }] });
    expect(list.text).not.toContain(body.secret);
    expect(list.text).not.toContain("sealed");

    const stored = (await row(body.webhook_id))!;
    expect(stored.secret_sealed).toMatch(SEALED_FORMAT);
    expect(JSON.stringify(stored)).not.toContain(body.secret.slice(6));
    const { service } = await testService();
    expect(await service.deps.webhookSecrets.open(stored.secret_sealed, body.webhook_id)).toBe(body.secret);
    // Sealed for this endpoint: moved to another row, it does not open.
    expect(await service.deps.webhookSecrets.unseal(stored.secret_sealed, "whk_another")).toBeNull();
  });

  test("creating and deleting are events of the audit trail, naming the host but never the whole URL", async () => {
    const user = await signup();
    const url = "https://93.184.215.14:8443/services/T000/B000/a-token-of-the-receiver";
    const hook = await created(user.token, { url, events: ["*"] });
    const [made] = await auditEvents(user.token, "webhook.created");
    expect(made.target).toEqual({ webhook_id: hook.webhook_id, host: "93.184.215.14:8443", events: ["*"] });
    expect(made.actor).toEqual({ member_id: expect.stringMatching(/^mbr_/) });
    expect(made.receipt.kind).toBe("event");
    expect((await call("DELETE", `/customer/webhooks/${hook.webhook_id}`, { headers: bearer(user.token) })).status).toBe(200);
    const [gone] = await auditEvents(user.token, "webhook.deleted");
    expect(gone.target).toEqual({ webhook_id: hook.webhook_id, host: "93.184.215.14:8443" });
    const all = await call("GET", "/customer/audit?event=webhook.*", { headers: bearer(user.token) });
    expect(all.body.events.map((e: Row) => e.event)).toEqual(["webhook.deleted", "webhook.created"]);
    expect(all.text).not.toContain("a-token-of-the-receiver");
  });

  test("bad input: 400 invalid_request naming the field and the reason", async () => {
    const user = await signup();
    const refused = async (json: Record<string, unknown>, message: RegExp) => {
      const reply = await create(user.token, json);
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.body.message).toMatch(message);
    };
    await refused({ url: "http://93.184.215.14/hooks", events: ["*"] }, /^body\/url: must be https\.$/);
    await refused({ url: "ftp://93.184.215.14/hooks", events: ["*"] }, /^body\/url: must be https/);
    await refused({ url: "not a url", events: ["*"] }, /^body\/url: is not a URL/);
    await refused({ url: `https://93.184.215.14/${"a".repeat(2000)}`, events: ["*"] }, /^body\/url/);
    await refused({ url: "https://user:pw@93.184.215.14/hooks", events: ["*"] }, /^body\/url: must not carry a user name or password/);
    await refused({ url: "https://127.0.0.1/hooks", events: ["*"] }, /^body\/url: 127\.0\.0\.1 is a loopback address/);
    await refused({ url: "https://10.0.0.8:8443/hooks", events: ["*"] }, /^body\/url: 10\.0\.0\.8 is a private address/);
    await refused({ url: "https://169.254.169.254/latest/meta-data", events: ["*"] }, /link-local/);
    await refused({ url: "https://[::1]/hooks", events: ["*"] }, /loopback/);
    await refused({ url: "https://[fd00::1]/hooks", events: ["*"] }, /unique-local/);
    await refused({ url: "https://100.64.1.1/hooks", events: ["*"] }, /carrier-grade NAT/);
    await refused({ url: "https://[::ffff:192.168.0.1]/hooks", events: ["*"] }, /IPv4-mapped address of a private address/);
    // The name resolves (the system's resolver, /etc/hosts) to a loopback address.
    await refused({ url: "https://localhost:8443/hooks", events: ["*"] }, /^body\/url: localhost resolves to a loopback address/);
    await refused({ url: "https://name.invalid/hooks", events: ["*"] }, /^body\/url: name\.invalid (does not resolve|could not be resolved)/);
    await refused({ url: PUBLIC_URL, events: [] }, /^body\/events/);
    await refused({ url: PUBLIC_URL, events: ["key.created"] }, /^body\/events\/0/);
    await refused({ url: PUBLIC_URL, events: ["*", "*"] }, /^body\/events/);
    await refused({ url: PUBLIC_URL }, /^body\/events/);
    await refused({ url: PUBLIC_URL, events: ["*"], secret: "whsec_mine" }, /secret/);
    await refused({ url: PUBLIC_URL, events: ["*"], description: "x".repeat(201) }, /^body\/description/);
    await refused({ url: PUBLIC_URL, events: ["*"], description: "two\nlines" }, /^body\/description/);
    expect((await call("GET", "/customer/webhooks", { headers: bearer(user.token) })).body.webhooks).toEqual([]);
  });

  test("a name that resolves to a private address is refused, a public one accepted (the service's resolver)", async () => {
    const { db } = await testService();
    const lookups: string[] = [];
    const lookup = async (host: string) => {
      lookups.push(host);
      return host === "inside.example.com" ? [{ address: "10.20.30.40", family: 4 as const }] : [{ address: "93.184.215.14", family: 4 as const }];
    };
    await withService(await createService(testConfig(), { db, log: createLogger("silent"), webhookLookup: lookup }), async (service) => {
      const user = await signup();
      const inside = await call("POST", "/customer/webhooks", { json: { url: "https://inside.example.com/hooks", events: ["*"] }, headers: bearer(user.token), service });
      expectErrorShape(inside, 400, "invalid_request");
      expect(inside.body.message).toBe("body/url: inside.example.com resolves to a private address.");
      expect(inside.text).not.toContain("10.20.30.40");
      const outside = await call("POST", "/customer/webhooks", { json: { url: "https://hooks.example.com/in", events: ["*"] }, headers: bearer(user.token), service });
      expect(outside.status).toBe(201);
      expect(lookups).toEqual(["inside.example.com", "hooks.example.com"]);
    });
  });

  test("WEBHOOK_ALLOW_PRIVATE=1: private targets are accepted", async () => {
    const { db } = await testService();
    await withService(await createService(testConfig({ webhookAllowPrivate: true }), { db, log: createLogger("silent") }), async (service) => {
      const user = await signup();
      const reply = await call("POST", "/customer/webhooks", { json: { url: "https://127.0.0.1:9/hooks", events: ["*"] }, headers: bearer(user.token), service });
      expect(reply.status).toBe(201);
      // Still https only.
      expectErrorShape(await call("POST", "/customer/webhooks", { json: { url: "http://127.0.0.1:9/hooks", events: ["*"] }, headers: bearer(user.token), service }), 400, "invalid_request");
    });
  });

  test("at most 10 endpoints: the 11th is 429 quota_exceeded (limit webhooks); deleting one makes room", async () => {
    const user = await signup();
    const hooks = [];
    for (let i = 0; i < 10; i++) hooks.push(await created(user.token, { url: `${PUBLIC_URL}/${i}`, events: ["*"] }));
    const eleventh = await create(user.token, { url: `${PUBLIC_URL}/10`, events: ["*"] });
    expectErrorShape(eleventh, 429, "quota_exceeded");
    expect(eleventh.body.limit).toBe("webhooks");
    expect((await call("GET", "/customer/webhooks", { headers: bearer(user.token) })).body.webhooks).toHaveLength(10);
    expect((await call("DELETE", `/customer/webhooks/${hooks[3].webhook_id}`, { headers: bearer(user.token) })).status).toBe(200);
    expect((await create(user.token, { url: `${PUBLIC_URL}/10`, events: ["*"] })).status).toBe(201);
    // Another tenant has its own ten.
    expect((await create((await signup()).token)).status).toBe(201);
  });
});

describe("one endpoint's routes", () => {
  test("unknown ids of any shape, and another tenant's ids, are 404 on every route", async () => {
    const [owner, stranger] = await Promise.all([signup(), signup()]);
    const hook = await created(owner.token);
    const routes = (id: string): [string, string][] => [
      ["POST", `/customer/webhooks/${id}/rotate-secret`],
      ["DELETE", `/customer/webhooks/${id}`],
      ["POST", `/customer/webhooks/${id}/test`],
      ["GET", `/customer/webhooks/${id}/deliveries`],
    ];
    for (const id of ["whk_AAAAAAAAAAAAAAAAAAAAAA", "whk_x", "x".repeat(40), "%00", encodeURIComponent("whk_é")]) {
      for (const [method, path] of routes(id)) expectErrorShape(await call(method, path, { headers: bearer(owner.token) }), 404, "not_found");
    }
    for (const [method, path] of routes(hook.webhook_id)) expectErrorShape(await call(method, path, { headers: bearer(stranger.token) }), 404, "not_found");
    // Nothing of the owner's changed.
    expect((await row(hook.webhook_id))!.status).toBe("active");
    expect(await outbox(hook.webhook_id)).toEqual([]);
  });

  test("rotate-secret: a new secret; the old one is kept sealed to sign beside it for 24 hours", async () => {
    const user = await signup();
    const hook = await created(user.token);
    const before = (await row(hook.webhook_id))!;
    const reply = await call("POST", `/customer/webhooks/${hook.webhook_id}/rotate-secret`, { headers: bearer(user.token) });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ok: true, webhook_id: hook.webhook_id, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/), previous_secret_expires_at: expect.any(String) });
    expect(reply.body.secret).not.toBe(hook.secret);
    const hours = (Date.parse(reply.body.previous_secret_expires_at) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThan(24.1);
    const after = (await row(hook.webhook_id))!;
    expect(after.previous_secret_sealed).toBe(before.secret_sealed);
    const { service } = await testService();
    expect(await service.deps.webhookSecrets.open(after.secret_sealed, hook.webhook_id)).toBe(reply.body.secret);
    const [event] = await auditEvents(user.token, "webhook.secret_rotated");
    expect(event.target).toEqual({ webhook_id: hook.webhook_id });
  });

  test("delete: gone from the list and every route (404), its secrets erased, its pending deliveries failed", async () => {
    const user = await signup();
    const hook = await created(user.token);
    const queued = await call("POST", `/customer/webhooks/${hook.webhook_id}/test`, { headers: bearer(user.token) });
    expect(queued.status).toBe(202);
    const reply = await call("DELETE", `/customer/webhooks/${hook.webhook_id}`, { headers: bearer(user.token) });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ok: true });
    expect((await call("GET", "/customer/webhooks", { headers: bearer(user.token) })).body.webhooks).toEqual([]);
    for (const [method, path] of [["DELETE", ""], ["POST", "/test"], ["POST", "/rotate-secret"], ["GET", "/deliveries"]]) {
      expectErrorShape(await call(method!, `/customer/webhooks/${hook.webhook_id}${path}`, { headers: bearer(user.token) }), 404, "not_found");
    }
    const stored = (await row(hook.webhook_id))!;
    expect(stored).toMatchObject({ status: "deleted", secret_sealed: null, previous_secret_sealed: null, deleted_by: expect.stringMatching(/^mbr_/) });
    expect(await outbox(hook.webhook_id)).toEqual([expect.objectContaining({ delivery_id: queued.body.delivery_id, status: "failed", last_error: "the endpoint was deleted", data: {} })]);
  });

  test("test: 202 with the delivery's id; the delivery waits in the log; a disabled endpoint is 409 webhook_disabled", async () => {
    const user = await signup();
    const hook = await created(user.token, { url: PUBLIC_URL, events: ["approval.denied"] });
    const reply = await call("POST", `/customer/webhooks/${hook.webhook_id}/test`, { headers: bearer(user.token) });
    expect(reply.status).toBe(202);
    expect(reply.body).toEqual({ ok: true, delivery_id: expect.stringMatching(/^dlv_[0-9A-Za-z]{22}$/) });
    const log = await call("GET", `/customer/webhooks/${hook.webhook_id}/deliveries`, { headers: bearer(user.token) });
    expect(log.status).toBe(200);
    expect(log.body).toEqual({
      ok: true,
      deliveries: [{ delivery_id: reply.body.delivery_id, event: "webhook.test", status: "pending", attempts: 0, last_status_code: null, last_error: null, next_attempt_at: expect.any(String), created_at: expect.any(String) }],
      next_cursor: null,
    });
    const [queued] = await outbox(hook.webhook_id);
    expect(queued).toMatchObject({ kind: "webhook.test", recipient: hook.webhook_id, data: { delivery_id: reply.body.delivery_id, data: { webhook_id: hook.webhook_id } } });

    const { db } = await testService();
    expect(await db.query("webhooks/disable", [user.tenantId, hook.webhook_id, "the endpoint answered 410 Gone", null])).toEqual([{ disabled: true }]);
    expectErrorShape(await call("POST", `/customer/webhooks/${hook.webhook_id}/test`, { headers: bearer(user.token) }), 409, "webhook_disabled");
    // Disabled: still listed (so the tenant sees why nothing arrives), its waiting delivery failed.
    expect((await call("GET", "/customer/webhooks", { headers: bearer(user.token) })).body.webhooks[0].status).toBe("disabled");
    const after = await call("GET", `/customer/webhooks/${hook.webhook_id}/deliveries`, { headers: bearer(user.token) });
    expect(after.body.deliveries[0]).toMatchObject({ status: "failed", next_attempt_at: null });
  });

  test("at most 60 test events an endpoint an hour: then 429 quota_exceeded (limit webhook_tests_per_hour)", async () => {
    const user = await signup();
    const hook = await created(user.token);
    for (let i = 0; i < 60; i++) expect((await call("POST", `/customer/webhooks/${hook.webhook_id}/test`, { headers: bearer(user.token) })).status).toBe(202);
    const refused = await call("POST", `/customer/webhooks/${hook.webhook_id}/test`, { headers: bearer(user.token) });
    expectErrorShape(refused, 429, "quota_exceeded");
    expect(refused.body.limit).toBe("webhook_tests_per_hour");
    expect(await outbox(hook.webhook_id)).toHaveLength(60);
  });

  test("deliveries come in pages, newest first; a cursor not of ours is 400", async () => {
    const user = await signup();
    const hook = await created(user.token);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await call("POST", `/customer/webhooks/${hook.webhook_id}/test`, { headers: bearer(user.token) })).body.delivery_id);
    const first = await call("GET", `/customer/webhooks/${hook.webhook_id}/deliveries?limit=2`, { headers: bearer(user.token) });
    expect(first.body.deliveries.map((d: Row) => d.delivery_id)).toEqual([ids[2], ids[1]]);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await call("GET", `/customer/webhooks/${hook.webhook_id}/deliveries?limit=2&cursor=${first.body.next_cursor}`, { headers: bearer(user.token) });
    expect(second.body).toMatchObject({ deliveries: [{ delivery_id: ids[0] }], next_cursor: null });
    expectErrorShape(await call("GET", `/customer/webhooks/${hook.webhook_id}/deliveries?cursor=nope`, { headers: bearer(user.token) }), 400, "invalid_request");
    expectErrorShape(await call("GET", `/customer/webhooks/${hook.webhook_id}/deliveries?limit=0`, { headers: bearer(user.token) }), 400, "invalid_request");
  });

  test("Idempotency-Key: a retried create answers the same endpoint and secret, and makes no second one", async () => {
    const user = await signup();
    const headers = { ...bearer(user.token), "idempotency-key": "hook-1" };
    const json = { url: PUBLIC_URL, events: ["*"] };
    const first = await call("POST", "/customer/webhooks", { json, headers });
    const again = await call("POST", "/customer/webhooks", { json, headers });
    expect(first.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect((await call("GET", "/customer/webhooks", { headers: bearer(user.token) })).body.webhooks).toHaveLength(1);
  });
});

describe("webhook_emit(): an event to the tenant's subscribed endpoints, in the caller's transaction", () => {
  test("one delivery per active endpoint subscribed to the type or to *; none to others, disabled or deleted ones", async () => {
    const { db } = await testService();
    const [user, other] = await Promise.all([signup(), signup()]);
    const exact = await created(user.token, { url: PUBLIC_URL, events: ["approval.requested"] });
    const all = await created(user.token, { url: PUBLIC_URL, events: ["*"] });
    const elsewhere = await created(user.token, { url: PUBLIC_URL, events: ["approval.denied"] });
    const disabled = await created(user.token, { url: PUBLIC_URL, events: ["*"] });
    const deleted = await created(user.token, { url: PUBLIC_URL, events: ["*"] });
    const foreign = await created(other.token, { url: PUBLIC_URL, events: ["*"] });
    await db.query("webhooks/disable", [user.tenantId, disabled.webhook_id, "the endpoint answered 410 Gone", null]);
    expect((await call("DELETE", `/customer/webhooks/${deleted.webhook_id}`, { headers: bearer(user.token) })).status).toBe(200);

    const data = { approval_id: "apv_1", receipt: { receipt_id: "rcpt_1", signature: "sig" } };
    expect(await testOne(db, "webhook_emit", [user.tenantId, "approval.requested", data])).toEqual({ queued: 2 });
    for (const hook of [exact, all]) {
      const [delivery] = await outbox(hook.webhook_id);
      expect(delivery).toMatchObject({ kind: "approval.requested", status: "pending", event: "approval.requested", data: { delivery_id: delivery!.delivery_id, data, timestamp: expect.any(String) } });
    }
    for (const hook of [elsewhere, disabled, deleted, foreign]) expect(await outbox(hook.webhook_id)).toEqual([]);
    // Rolled back with its transaction: nothing stays queued.
    await db.tx(async (q) => {
      await q.query("webhooks/test", [user.tenantId, null, exact.webhook_id]);
      throw new Error("roll back");
    }).catch(() => {});
    expect(await outbox(exact.webhook_id)).toHaveLength(1);
  });
});
