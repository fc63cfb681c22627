// /customer/keys as a customer uses it: create, list, rotate, revoke, and what each does to the
// next request made with the key, also on a second instance sharing the database.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Service } from "../../src/app/service.ts";
import { isWellFormedSecret, newSecret } from "../../src/keys/secret.ts";
import { bearer, protect } from "../helpers/customer.ts";
import { call, expectErrorShape, secondInstance, signup } from "../helpers/service.ts";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const createKey = (token: string, json: unknown, headers: Record<string, string> = {}) => call("POST", "/customer/keys", { json, headers: { ...bearer(token), ...headers } });
const rotate = (token: string, keyId: string, opts: { service?: Service } = {}) => call("POST", `/customer/keys/${keyId}/rotate`, { headers: bearer(token), ...opts });
const revoke = (token: string, keyId: string, opts: { service?: Service } = {}) => call("POST", `/customer/keys/${keyId}/revoke`, { headers: bearer(token), ...opts });
const list = (token: string) => call("GET", "/customer/keys", { headers: bearer(token) });

describe("POST /customer/keys", () => {
  test("201 with the documented fields; the secret works at once and is never shown again", async () => {
    const a = await signup();
    const reply = await createKey(a.token, { label: "ci bot" });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.body).sort()).toEqual(["created_at", "created_by", "key_id", "label", "ok", "secret", "status", "tenant_id"]);
    expect(reply.body).toMatchObject({ ok: true, tenant_id: a.tenantId, label: "ci bot", status: "active", created_by: a.memberId });
    expect(reply.body.key_id).toMatch(/^key_[0-9A-Za-z]{22}$/);
    expect(reply.body.created_at).toMatch(ISO);
    expect(isWellFormedSecret(reply.body.secret)).toBe(true);
    expect((await protect(reply.body.secret)).status).toBe(200);
    const listed = await list(a.token);
    expect(listed.text).not.toContain(reply.body.secret);
  });

  test("labels of 1 and 100 characters are fine; empty, 101, control characters, wrong types and extra fields are 400", async () => {
    const a = await signup();
    expect((await createKey(a.token, { label: "x" })).status).toBe(201);
    expect((await createKey(a.token, { label: "é".repeat(100) })).status).toBe(201);
    for (const json of [{ label: "" }, { label: "x".repeat(101) }, { label: "a\u0000b" }, { label: "tab\there" }, { label: 7 }, {}, { label: "x", admin: true }]) {
      const reply = await createKey(a.token, json);
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.body.message).toMatch(/^body/);
    }
    expectErrorShape(await call("POST", "/customer/keys", { body: "{", headers: { ...bearer(a.token), "content-type": "application/json" } }), 400, "invalid_json");
  });
});

describe("GET /customer/keys", () => {
  test("every key, newest first, with hint, last_used_at and revoked_at; never a hash or a secret", async () => {
    const a = await signup();
    const second = (await createKey(a.token, { label: "second" })).body;
    await protect(a.apiKey);
    await revoke(a.token, second.key_id);
    const reply = await list(a.token);
    expect(reply.status).toBe(200);
    expect(reply.body.ok).toBe(true);
    expect(reply.body.keys).toHaveLength(2);
    for (const key of reply.body.keys) {
      expect(Object.keys(key).sort()).toEqual(["actions", "allowed_ips", "created_at", "created_by", "enabled", "expires_at", "hint", "key_id", "label", "last_used_at", "limits", "metadata", "overlap_until", "revoked_at", "revoked_by", "status", "tenant_id"]);
      expect(key.tenant_id).toBe(a.tenantId);
      // Signup's key and the second were both made by the owner who signed up.
      expect(key.created_by).toBe(a.memberId);
    }
    // Newest first.
    const [other, first] = reply.body.keys;
    expect(first).toMatchObject({ label: "default", status: "active", revoked_at: null, revoked_by: null, hint: a.apiKey.slice(-4) });
    // A key made without any of the agent properties: none of them restricts it.
    expect(first).toMatchObject({ expires_at: null, enabled: true, actions: null, limits: {}, allowed_ips: null, metadata: {}, overlap_until: null });
    expect(first.last_used_at).toMatch(ISO);
    expect(other).toMatchObject({ key_id: second.key_id, label: "second", status: "revoked", revoked_by: a.memberId, last_used_at: null, hint: second.secret.slice(-4) });
    expect(other.revoked_at).toMatch(ISO);
    expect(reply.text).not.toContain(a.apiKey);
    expect(reply.text).not.toMatch(/[0-9a-f]{64}/);
  });

  test("shows only the caller's own keys", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    const reply = await list(b.token);
    expect(reply.body.keys.map((k: { tenant_id: string }) => k.tenant_id)).toEqual([b.tenantId]);
    expect(reply.text).not.toContain(a.tenantId);
  });
});

describe("POST /customer/keys/{key_id}/rotate", () => {
  test("201: the old key is revoked at once, the new one (same label) works", async () => {
    const a = await signup();
    const [old] = (await list(a.token)).body.keys;
    const reply = await rotate(a.token, old.key_id);
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.body).sort()).toEqual(["created_at", "created_by", "key_id", "label", "ok", "revoked_key_id", "secret", "status", "tenant_id"]);
    expect(reply.body).toMatchObject({ ok: true, revoked_key_id: old.key_id, tenant_id: a.tenantId, label: "default", status: "active", created_by: a.memberId });
    expect(reply.body.key_id).not.toBe(old.key_id);
    expectErrorShape(await protect(a.apiKey), 401, "key_revoked");
    expect((await protect(reply.body.secret)).status).toBe(200);
    const keys = (await list(a.token)).body.keys;
    expect(keys.find((k: { key_id: string }) => k.key_id === old.key_id)).toMatchObject({ status: "revoked", revoked_by: a.memberId });
  });

  test("a revoked (or already rotated) key: 409 key_not_active; unknown or another tenant's: 404", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    const [key] = (await list(a.token)).body.keys;
    expect((await rotate(a.token, key.key_id)).status).toBe(201);
    expectErrorShape(await rotate(a.token, key.key_id), 409, "key_not_active");
    const [current] = (await list(a.token)).body.keys.filter((k: { status: string }) => k.status === "active");
    expectErrorShape(await rotate(b.token, current.key_id), 404, "not_found");
    expectErrorShape(await rotate(a.token, "key_" + "0".repeat(22)), 404, "not_found");
    expectErrorShape(await rotate(a.token, "nonsense"), 404, "not_found");
    // The other tenant's attempt changed nothing.
    expect((await list(a.token)).body.keys.find((k: { key_id: string }) => k.key_id === current.key_id).status).toBe("active");
  });

  test("parallel rotations of one key: exactly one wins, the others get 409 key_not_active", async () => {
    const a = await signup();
    const [key] = (await list(a.token)).body.keys;
    const replies = await Promise.all(Array.from({ length: 8 }, () => rotate(a.token, key.key_id)));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 201)) expectErrorShape(r, 409, "key_not_active");
    const keys = (await list(a.token)).body.keys;
    expect(keys).toHaveLength(2);
    expect(keys.filter((k: { status: string }) => k.status === "active")).toHaveLength(1);
  });
});

describe("POST /customer/keys/{key_id}/revoke", () => {
  test("200 with the documented fields; the very next request with the key gets 401 key_revoked", async () => {
    const a = await signup();
    const [key] = (await list(a.token)).body.keys;
    expect((await protect(a.apiKey)).status).toBe(200);
    const reply = await revoke(a.token, key.key_id);
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(["key_id", "ok", "revoked_at", "revoked_by", "status"]);
    expect(reply.body).toMatchObject({ ok: true, key_id: key.key_id, status: "revoked", revoked_by: a.memberId });
    expect(reply.body.revoked_at).toMatch(ISO);
    expectErrorShape(await protect(a.apiKey), 401, "key_revoked");
    expectErrorShape(await call("POST", "/v1/simulate", { json: { preset: "small_payment" }, headers: { "x-api-key": a.apiKey } }), 401, "key_revoked");
  });

  test("concurrent requests with many keys (lookups share database calls): each gets its own key's answer", async () => {
    const tenants = await Promise.all(Array.from({ length: 4 }, () => signup()));
    const [revoked] = (await list(tenants[1].token)).body.keys;
    expect((await revoke(tenants[1].token, revoked.key_id)).status).toBe(200);
    const unknown = newSecret(); // well-formed, so it is looked up (and not found)
    const calls = Array.from({ length: 60 }, (_, i) => i % 5);
    const replies = await Promise.all(
      calls.map((n) => protect(n === 4 ? unknown : tenants[n].apiKey)),
    );
    replies.forEach((reply, i) => {
      const n = calls[i];
      if (n === 1) expectErrorShape(reply, 401, "key_revoked");
      else if (n === 4) expectErrorShape(reply, 401, "unauthorized");
      else {
        expect(reply.status).toBe(200);
        expect(reply.body.tenant_id).toBe(tenants[n].tenantId);
      }
    });
  });

  test("twice: 409 key_not_active; another tenant's key: 404 and it keeps working", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    const [key] = (await list(a.token)).body.keys;
    expectErrorShape(await revoke(b.token, key.key_id), 404, "not_found");
    expect((await protect(a.apiKey)).status).toBe(200);
    expect((await revoke(a.token, key.key_id)).status).toBe(200);
    expectErrorShape(await revoke(a.token, key.key_id), 409, "key_not_active");
    expectErrorShape(await rotate(a.token, key.key_id), 409, "key_not_active");
  });
});

describe("two service instances on one database", () => {
  let other: Service;
  let second: Awaited<ReturnType<typeof secondInstance>> | undefined;

  beforeAll(async () => {
    second = await secondInstance();
    other = second.service;
  });
  afterAll(() => second?.close());

  test("a revocation on one instance is refused on the other at once (no cache)", async () => {
    const a = await signup();
    const [key] = (await list(a.token)).body.keys;
    expect((await protect(a.apiKey, undefined, { service: other })).status).toBe(200);
    expect((await revoke(a.token, key.key_id)).status).toBe(200);
    expectErrorShape(await protect(a.apiKey, undefined, { service: other }), 401, "key_revoked");
  });

  test("a rotation on the other instance is refused here at once; the new key works here", async () => {
    const a = await signup();
    const [key] = (await list(a.token)).body.keys;
    expect((await protect(a.apiKey)).status).toBe(200);
    const rotated = await rotate(a.token, key.key_id, { service: other });
    expect(rotated.status).toBe(201);
    expectErrorShape(await protect(a.apiKey), 401, "key_revoked");
    expect((await protect(rotated.body.secret)).status).toBe(200);
  });
});
