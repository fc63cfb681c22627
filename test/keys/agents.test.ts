// Keys for agents (docs/api.md, "Keys for agents"): expiry, suspension, actions, the key's own
// limits, addresses, metadata and a rotation's overlap, each held on the very next request after
// a change, also by a second instance sharing the database that had read the key before. Every
// test first uses the key on the instance that is checked afterwards, so that instance holds the
// key's context: without the epoch move of the change (sql/schema/05_keys.sql), it would answer
// from the context it read before.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Service } from "../../src/app/service.ts";
import { bearer, execute, protect } from "../helpers/customer.ts";
import { call, expectErrorShape, secondInstance, signup, type Reply } from "../helpers/service.ts";

let other: Service;
let second: Awaited<ReturnType<typeof secondInstance>> | undefined;

beforeAll(async () => {
  second = await secondInstance();
  other = second.service;
});
afterAll(() => second?.close());

const READ = { action: "document.read" };
const list = async (token: string) => (await call("GET", "/customer/keys", { headers: bearer(token) })).body.keys as Record<string, any>[];
const keyOf = async (token: string) => (await list(token))[0]!.key_id as string;
const patch = (token: string, keyId: string, json: unknown, service?: Service) => call("PATCH", `/customer/keys/${keyId}`, { json, headers: bearer(token), service });
const usage = async (token: string) => (await call("GET", "/customer/dashboard", { headers: bearer(token) })).body.usage as { protect_today: number; receipts_stored: number };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A new tenant whose first key both instances have just used (and so hold). */
async function warmTenant() {
  const a = await signup();
  const keyId = await keyOf(a.token);
  expect((await protect(a.apiKey, READ)).status).toBe(200);
  expect((await protect(a.apiKey, READ, { service: other })).status).toBe(200);
  return { ...a, keyId };
}

/** The reply on this instance and on the other, for one request shape. */
async function onBoth(request: (service?: Service) => Promise<Reply>): Promise<Reply[]> {
  return [await request(), await request(other)];
}

describe("PATCH /customer/keys/{key_id}", () => {
  test("200 with the key as listed; only the fields sent change; null clears; the list shows every property", async () => {
    const a = await signup();
    const keyId = await keyOf(a.token);
    const expires = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const reply = await patch(a.token, keyId, {
      expires_at: expires,
      actions: ["document.*", "email.send"],
      limits: { protect_per_day: 500, per_second: 20, burst: 40 },
      allowed_ips: ["203.0.113.0/24", "2001:db8::/32"],
      metadata: { agent: "invoice-bot", owner: "finance" },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      ok: true, key_id: keyId, status: "active", enabled: true, expires_at: expires, actions: ["document.*", "email.send"],
      limits: { protect_per_day: 500, per_second: 20, burst: 40 }, allowed_ips: ["203.0.113.0/24", "2001:db8::/32"],
      metadata: { agent: "invoice-bot", owner: "finance" }, overlap_until: null, label: "default",
    });
    const [listed] = await list(a.token);
    const { ok: _, ...shown } = reply.body;
    expect(listed).toEqual(shown);

    const cleared = await patch(a.token, keyId, { actions: null, limits: null, label: "renamed" });
    expect(cleared.body).toMatchObject({ actions: null, limits: {}, label: "renamed", expires_at: expires, allowed_ips: ["203.0.113.0/24", "2001:db8::/32"] });
    expect((await patch(a.token, keyId, { expires_at: null, allowed_ips: null, metadata: null })).body).toMatchObject({ expires_at: null, allowed_ips: null, metadata: {} });
  });

  test("bad input is 400 invalid_request with the path; nothing changes", async () => {
    const a = await signup();
    const keyId = await keyOf(a.token);
    const bad = [
      {},
      { unknown: 1 },
      { expires_at: new Date(Date.now() - 1000).toISOString() },
      { expires_at: "tomorrow" },
      { enabled: "no" },
      { actions: [] },
      { actions: ["pay*ment"] },
      { limits: { burst: 5 } },
      { limits: { per_second: 0 } },
      { limits: { protect_per_day: 1001 } }, // the free plan's is 1000
      { limits: { hourly: 5 } },
      { allowed_ips: ["10.0.0.1/8"] },
      { allowed_ips: ["10.0.0.0/33"] },
      { allowed_ips: ["not an address"] },
      { allowed_ips: [] },
      { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) },
      { metadata: { "bad key": "v" } },
      { metadata: { k: "x".repeat(257) } },
      { metadata: { k: 5 } },
    ];
    for (const json of bad) {
      const reply = await patch(a.token, keyId, json);
      expectErrorShape(reply, 400, "invalid_request");
    }
    const [key] = await list(a.token);
    expect(key).toMatchObject({ expires_at: null, enabled: true, actions: null, limits: {}, allowed_ips: null, metadata: {} });
    // The bounds themselves are fine.
    const max = await patch(a.token, keyId, {
      limits: { protect_per_day: 1000 },
      metadata: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`.padEnd(40, "x"), "v".repeat(256)])),
    });
    expect(max.status).toBe(200);
  });

  test("a revoked key: 409 key_not_active; another tenant's or an unknown key: 404", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    const keyId = await keyOf(a.token);
    expectErrorShape(await patch(b.token, keyId, { enabled: false }), 404, "not_found");
    expectErrorShape(await patch(a.token, "key_" + "0".repeat(22), { enabled: false }), 404, "not_found");
    expectErrorShape(await patch(a.token, "nonsense", { enabled: false }), 404, "not_found");
    expect((await protect(a.apiKey, READ)).status).toBe(200);
    expect((await call("POST", `/customer/keys/${keyId}/revoke`, { headers: bearer(a.token) })).status).toBe(200);
    expectErrorShape(await patch(a.token, keyId, { enabled: true }), 409, "key_not_active");
  });

  test("key.created names the properties given; key.updated the new value of each that changed, and nothing when none did", async () => {
    const a = await signup();
    const [first] = (await call("GET", "/customer/keys", { headers: bearer(a.token) })).body.keys;
    const created = await call("POST", "/customer/keys", { json: { label: "agent", actions: ["document.read"], metadata: { agent: "x" } }, headers: bearer(a.token) });
    expect(created.status).toBe(201);
    const keyId = created.body.key_id;
    expect((await patch(a.token, keyId, { enabled: false, actions: ["document.read"] })).status).toBe(200);
    expect((await patch(a.token, keyId, { enabled: false })).status).toBe(200);
    const events = (await call("GET", "/customer/audit?event=key.*", { headers: bearer(a.token) })).body.events.reverse();
    expect(events.map((e: any) => [e.event, e.target])).toEqual([
      // The signup's first key: no property given.
      ["key.created", { key_id: first.key_id, label: "default" }],
      ["key.created", { key_id: keyId, label: "agent", actions: ["document.read"], metadata: { agent: "x" } }],
      ["key.updated", { key_id: keyId, changed: { enabled: false } }],
    ]);
  });
});

describe("each property holds on the very next request, on both instances", () => {
  test("enabled: false suspends (401 key_disabled), true lifts it; revoke stays final", async () => {
    const a = await warmTenant();
    expect((await patch(a.token, a.keyId, { enabled: false }, other)).status).toBe(200);
    for (const reply of await onBoth((service) => protect(a.apiKey, READ, { service }))) expectErrorShape(reply, 401, "key_disabled");
    expectErrorShape(await call("POST", "/v1/simulate", { json: { preset: "small_payment" }, headers: { "x-api-key": a.apiKey } }), 401, "key_disabled");
    expect((await patch(a.token, a.keyId, { enabled: true })).status).toBe(200);
    for (const reply of await onBoth((service) => protect(a.apiKey, READ, { service }))) expect(reply.status).toBe(200);
    // A suspended key can still be revoked, and then nothing brings it back.
    expect((await patch(a.token, a.keyId, { enabled: false })).status).toBe(200);
    expect((await call("POST", `/customer/keys/${a.keyId}/revoke`, { headers: bearer(a.token) })).status).toBe(200);
    for (const reply of await onBoth((service) => protect(a.apiKey, READ, { service }))) expectErrorShape(reply, 401, "key_revoked");
  });

  test("expires_at: from that instant 401 key_expired; at creation too; clearing it (null) lifts it only before", async () => {
    const a = await warmTenant();
    const soon = Date.now() + 1500;
    expect((await patch(a.token, a.keyId, { expires_at: new Date(soon).toISOString() })).status).toBe(200);
    for (const reply of await onBoth((service) => protect(a.apiKey, READ, { service }))) expect(reply.status).toBe(200);
    await sleep(soon - Date.now() + 50);
    for (const reply of await onBoth((service) => protect(a.apiKey, READ, { service }))) expectErrorShape(reply, 401, "key_expired");
    // An expired key is still listed active: PATCH gives it a new expiry.
    expect((await patch(a.token, a.keyId, { expires_at: new Date(Date.now() + 86_400_000).toISOString() }, other)).status).toBe(200);
    for (const reply of await onBoth((service) => protect(a.apiKey, READ, { service }))) expect(reply.status).toBe(200);

    const created = await call("POST", "/customer/keys", { json: { label: "short", expires_at: new Date(Date.now() + 1200).toISOString() }, headers: bearer(a.token) });
    expect(created.status).toBe(201);
    expect((await protect(created.body.secret, READ)).status).toBe(200);
    await sleep(1300);
    expectErrorShape(await protect(created.body.secret, READ), 401, "key_expired");
    expectErrorShape(await call("POST", "/customer/keys", { json: { label: "past", expires_at: new Date(Date.now() - 1).toISOString() }, headers: bearer(a.token) }), 400, "invalid_request");
  });

  test("actions: another action is 403 action_not_allowed and stores nothing; patterns as in policies; execute and AuthZEN too", async () => {
    const a = await warmTenant();
    const allowed = await protect(a.apiKey); // payment.send, ALLOWED under the default policy, before the list
    expect(allowed.body.decision).toBe("ALLOWED");
    expect((await patch(a.token, a.keyId, { actions: ["document.*", "email.send"] }, other)).status).toBe(200);
    const before = await usage(a.token);
    for (const reply of await onBoth((service) => protect(a.apiKey, undefined, { service }))) {
      expectErrorShape(reply, 403, "action_not_allowed");
      expect(reply.body.message).toContain("payment.send");
    }
    for (const reply of await onBoth((service) => protect(a.apiKey, { action: "email.sendmail" }, { service }))) expectErrorShape(reply, 403, "action_not_allowed");
    expect(await usage(a.token)).toEqual(before); // no receipt, nothing counted
    for (const reply of await onBoth((service) => protect(a.apiKey, READ, { service }))) expect(reply.status).toBe(200);
    expect((await protect(a.apiKey, { action: "document.write" })).status).toBe(200);
    expect((await protect(a.apiKey, { action: "email.send" })).status).toBe(200);
    // Simulating one: the same refusal (a preset's action, or an input's).
    const simulate = (json: unknown) => call("POST", "/v1/simulate", { json, headers: { "x-api-key": a.apiKey } });
    expectErrorShape(await simulate({ preset: "small_payment" }), 403, "action_not_allowed");
    expectErrorShape(await simulate({ input: { action: "payment.send" } }), 403, "action_not_allowed");
    expect((await simulate({ input: READ })).status).toBe(200);
    // Executing a payment decided before the list is an action outside it as well.
    expectErrorShape(await execute(a.apiKey, allowed.body.receipt_id), 403, "action_not_allowed");
    // AuthZEN: a single evaluation is refused as protect is; in a batch it is that evaluation's closed decision.
    const evaluation = (name: string) => ({ subject: { type: "agent", id: "x" }, resource: { type: "doc", id: "1" }, action: { name } });
    const single = await call("POST", "/access/v1/evaluation", { json: evaluation("payment.send"), headers: { "x-api-key": a.apiKey } });
    expectErrorShape(single, 403, "action_not_allowed");
    const batch = await call("POST", "/access/v1/evaluations", { json: { evaluations: [evaluation("payment.send"), evaluation("document.read")] }, headers: { "x-api-key": a.apiKey } });
    expect(batch.status).toBe(200);
    expect(batch.body.evaluations[0]).toMatchObject({ decision: false, context: { error: { status: 403, code: "action_not_allowed" } } });
    expect(batch.body.evaluations[1].decision).toBe(true);
    // Cleared: every action again.
    expect((await patch(a.token, a.keyId, { actions: null })).status).toBe(200);
    for (const reply of await onBoth((service) => protect(a.apiKey, undefined, { service }))) expect(reply.status).toBe(200);
  });

  test("allowed_ips: another address is 401 unauthorized; IPv4, IPv6 and IPv4-mapped IPv6 clients", async () => {
    const a = await warmTenant();
    const from = (ip: string | undefined, service?: Service) => call("POST", "/v1/protect", { json: READ, headers: { "x-api-key": a.apiKey }, ip, service });
    expect((await from("198.51.100.7", other)).status).toBe(200);
    expect((await patch(a.token, a.keyId, { allowed_ips: ["203.0.113.0/24", "2001:db8:1::/48", "192.0.2.9"] })).status).toBe(200);
    for (const service of [undefined, other]) {
      expectErrorShape(await from("198.51.100.7", service), 401, "unauthorized");
      expectErrorShape(await from(undefined, service), 401, "unauthorized"); // an unknown address is not in any range
      expect((await from("203.0.113.200", service)).status).toBe(200);
      expect((await from("::ffff:203.0.113.5", service)).status).toBe(200);
      expect((await from("192.0.2.9", service)).status).toBe(200);
      expectErrorShape(await from("192.0.2.10", service), 401, "unauthorized");
      expect((await from("2001:db8:1:ffff::1", service)).status).toBe(200);
      expectErrorShape(await from("2001:db8:2::1", service), 401, "unauthorized");
    }
    expect((await patch(a.token, a.keyId, { allowed_ips: null })).status).toBe(200);
    expect((await from("198.51.100.7", other)).status).toBe(200);
  });

  test("limits.protect_per_day: the next protect past it is 429 quota_exceeded key_protect_per_day, whichever instance", async () => {
    const a = await warmTenant();
    expect((await patch(a.token, a.keyId, { limits: { protect_per_day: 3 } }, other)).status).toBe(200);
    const replies = [];
    for (let i = 0; i < 5; i++) replies.push(await protect(a.apiKey, READ, { service: i % 2 ? other : undefined }));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
    for (const refused of replies.slice(3)) {
      expectErrorShape(refused, 429, "quota_exceeded");
      expect(refused.body.limit).toBe("key_protect_per_day");
    }
    // Another key of the tenant is not held to it.
    const second = await call("POST", "/customer/keys", { json: { label: "free" }, headers: bearer(a.token) });
    expect((await protect(second.body.secret, READ)).status).toBe(200);
    // Raised: the key goes on.
    expect((await patch(a.token, a.keyId, { limits: { protect_per_day: 4 } })).status).toBe(200);
    expect((await protect(a.apiKey, READ, { service: other })).status).toBe(200);
    expectErrorShape(await protect(a.apiKey, READ), 429, "quota_exceeded");
  });

  test("limits.per_second and burst: a token bucket shared by the instances; 429 rate_limited with retry_after", async () => {
    const a = await warmTenant();
    expect((await patch(a.token, a.keyId, { limits: { per_second: 1, burst: 3 } })).status).toBe(200);
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await protect(a.apiKey, READ, { service: i % 2 ? other : undefined }));
    expect(replies.slice(0, 3).map((r) => r.status)).toEqual([200, 200, 200]);
    expectErrorShape(replies[3]!, 429, "rate_limited");
    expect(replies[3]!.body.retry_after).toBeGreaterThanOrEqual(1);
    expect(Number(replies[3]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Lifted: the next request passes.
    expect((await patch(a.token, a.keyId, { limits: null }, other)).status).toBe(200);
    for (const reply of await onBoth((service) => protect(a.apiKey, READ, { service }))) expect(reply.status).toBe(200);
  });

  test("metadata changes nothing a request sees, and is listed", async () => {
    const a = await warmTenant();
    expect((await patch(a.token, a.keyId, { metadata: { agent: "crawler", owner: "ops@example.com" } })).status).toBe(200);
    for (const reply of await onBoth((service) => protect(a.apiKey, READ, { service }))) expect(reply.status).toBe(200);
    expect((await list(a.token))[0]!.metadata).toEqual({ agent: "crawler", owner: "ops@example.com" });
  });
});

describe("rotation with an overlap", () => {
  test("the old secret works until overlap_until, on both instances; the successor keeps the properties; revoke ends the overlap", async () => {
    const a = await warmTenant();
    expect((await patch(a.token, a.keyId, { actions: ["document.*"], metadata: { agent: "a" } })).status).toBe(200);
    const rotated = await call("POST", `/customer/keys/${a.keyId}/rotate`, { json: { overlap: 3600 }, headers: bearer(a.token) });
    expect(rotated.status).toBe(201);
    for (const secret of [a.apiKey, rotated.body.secret]) {
      for (const reply of await onBoth((service) => protect(secret, READ, { service }))) expect(reply.status).toBe(200);
      expectErrorShape(await protect(secret), 403, "action_not_allowed");
    }
    const keys = await list(a.token);
    const old = keys.find((k) => k.key_id === a.keyId)!;
    expect(old.status).toBe("revoked");
    expect(Date.parse(old.overlap_until) - Date.parse(old.revoked_at)).toBeGreaterThanOrEqual(3_599_000);
    expect(keys.find((k) => k.key_id === rotated.body.key_id)).toMatchObject({ actions: ["document.*"], metadata: { agent: "a" }, overlap_until: null });
    // Revoking the old key ends its overlap at once; a second revoke is 409.
    expect((await call("POST", `/customer/keys/${a.keyId}/revoke`, { headers: bearer(a.token), service: other })).status).toBe(200);
    for (const reply of await onBoth((service) => protect(a.apiKey, READ, { service }))) expectErrorShape(reply, 401, "key_revoked");
    expectErrorShape(await call("POST", `/customer/keys/${a.keyId}/revoke`, { headers: bearer(a.token) }), 409, "key_not_active");
    expect((await protect(rotated.body.secret, READ)).status).toBe(200);
  });

  test("a short overlap ends by itself; overlap 0 (the default) and out-of-range values", async () => {
    const a = await warmTenant();
    const rotated = await call("POST", `/customer/keys/${a.keyId}/rotate`, { json: { overlap: 1 }, headers: bearer(a.token) });
    expect(rotated.status).toBe(201);
    expect((await protect(a.apiKey, READ, { service: other })).status).toBe(200);
    await sleep(1100);
    for (const reply of await onBoth((service) => protect(a.apiKey, READ, { service }))) expectErrorShape(reply, 401, "key_revoked");
    for (const overlap of [-1, 86_401, 1.5, null]) {
      expectErrorShape(await call("POST", `/customer/keys/${rotated.body.key_id}/rotate`, { json: { overlap }, headers: bearer(a.token) }), 400, "invalid_request");
    }
    const plain = await call("POST", `/customer/keys/${rotated.body.key_id}/rotate`, { json: { overlap: 0 }, headers: bearer(a.token) });
    expect(plain.status).toBe(201);
    expectErrorShape(await protect(rotated.body.secret, READ), 401, "key_revoked");
  });
});
