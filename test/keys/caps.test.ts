// Bounded growth per tenant (the database enforces each cap; docs/security.md names them):
// active and kept API keys, upgrade requests per day, Idempotency-Key records; and GET
// /customer/keys pages newest first.
import { describe, expect, test } from "bun:test";
import { bearer } from "../helpers/customer.ts";
import { call, expectErrorShape, signup, testService, type Reply } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

const createKey = (token: string, label = "k", headers: Record<string, string> = {}) =>
  call("POST", "/customer/keys", { json: { label }, headers: { ...bearer(token), ...headers } });
const listKeys = (token: string, query = "") => call("GET", `/customer/keys${query}`, { headers: bearer(token) });

describe("GET /customer/keys pages newest first", () => {
  test("limit and cursor walk every key once, newest first, rotations included", async () => {
    const a = await signup();
    // Each step names the answer it got, so a failure says which request and what came back.
    const ok = (reply: Reply, status: number, step: string) => expect(reply.status, `${step}: ${reply.status} ${reply.text}`).toBe(status);
    for (const label of ["one", "two", "three"]) ok(await createKey(a.token, label), 201, `create ${label}`);
    const newest = (await listKeys(a.token, "?limit=1")).body.keys[0];
    // A rotation revokes a key and makes its successor in one transaction; both stay in the walk.
    ok(await call("POST", `/customer/keys/${newest.key_id}/rotate`, { headers: bearer(a.token) }), 201, "rotate the newest");

    const all = await listKeys(a.token);
    ok(all, 200, "list all");
    const listing = JSON.stringify(all.body.keys.map((k: { key_id: string; label: string; created_at: string }) => [k.key_id, k.label, k.created_at]));
    expect(all.body.keys, listing).toHaveLength(5);
    expect(all.body.next_cursor).toBeNull();
    const created = all.body.keys.map((k: { created_at: string }) => k.created_at);
    expect([...created].sort().reverse(), listing).toEqual(created);

    const walked: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const reply = await listKeys(a.token, `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      ok(reply, 200, `page ${pages + 1}`);
      expect(reply.body.keys.length).toBeLessThanOrEqual(2);
      walked.push(...reply.body.keys.map((k: { key_id: string }) => k.key_id));
      cursor = reply.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(walked, `walked ${JSON.stringify(walked)}, listed ${listing}`).toEqual(all.body.keys.map((k: { key_id: string }) => k.key_id));
    expect(pages).toBe(3);
    for (const key of all.body.keys) expect(Object.keys(key).sort()).toEqual(["actions", "allowed_ips", "created_at", "created_by", "enabled", "expires_at", "hint", "key_id", "label", "last_used_at", "limits", "metadata", "overlap_until", "revoked_at", "revoked_by", "status", "tenant_id"]);
  });

  test("bad limit or cursor: 400 invalid_request; another tenant's cursor shows only your own keys", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    for (const query of ["?limit=0", "?limit=101", "?limit=x", "?limit=1.5", "?cursor=nope", "?cursor=" + "A".repeat(300), "?other=1"]) {
      expectErrorShape(await listKeys(a.token, query), 400, "invalid_request");
    }
    await createKey(b.token);
    const theirs = (await listKeys(b.token, "?limit=1")).body.next_cursor;
    expect(theirs).toBeString();
    const mine = await listKeys(a.token, `?cursor=${encodeURIComponent(theirs)}`);
    expect(mine.status).toBe(200);
    for (const key of mine.body.keys) expect(key.tenant_id).toBe(a.tenantId);
    expect((await listKeys(a.token, "?limit=100")).body.keys).toHaveLength(1);
  });
});

describe("caps", () => {
  test("at most 20 active keys: the next create is 429 quota_exceeded api_keys_active; a revoke frees a place", async () => {
    const a = await signup();
    for (let i = 1; i < 20; i++) expect((await createKey(a.token, `k${i}`)).status).toBe(201);
    const refused = await createKey(a.token, "one too many");
    expectErrorShape(refused, 429, "quota_exceeded");
    expect(refused.body.limit).toBe("api_keys_active");
    // Rotation keeps the active count: it still works at the cap.
    const first = (await listKeys(a.token, "?limit=1")).body.keys[0];
    expect((await call("POST", `/customer/keys/${first.key_id}/rotate`, { headers: bearer(a.token) })).status).toBe(201);
    const victim = (await listKeys(a.token, "?limit=1")).body.keys[0];
    expect((await call("POST", `/customer/keys/${victim.key_id}/revoke`, { headers: bearer(a.token) })).status).toBe(200);
    expect((await createKey(a.token, "now fits")).status).toBe(201);
  });

  test("at most 1,000 keys kept in all: create and rotate get 429 quota_exceeded api_keys_total", async () => {
    const { db } = await testService();
    const a = await signup();
    await testQuery(db, "keys_fill_revoked", [a.tenantId, 998]);
    await testQuery(db, "keys_revoke_fillers", [a.tenantId]);
    expect((await createKey(a.token, "the thousandth")).status).toBe(201);
    const refused = await createKey(a.token, "one more");
    expectErrorShape(refused, 429, "quota_exceeded");
    expect(refused.body.limit).toBe("api_keys_total");
    const active = (await listKeys(a.token, "?limit=1")).body.keys[0];
    const rotate = await call("POST", `/customer/keys/${active.key_id}/rotate`, { headers: bearer(a.token) });
    expectErrorShape(rotate, 429, "quota_exceeded");
    expect(rotate.body.limit).toBe("api_keys_total");
    // Refused whole: the key it would have replaced still works as before.
    expect((await listKeys(a.token, "?limit=1")).body.keys[0]).toMatchObject({ key_id: active.key_id, status: "active" });
  });

  test("at most 10 upgrade requests per tenant per UTC day: request-and-cancel loops end in 429", async () => {
    const a = await signup();
    const request = () => call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "loop" }, headers: bearer(a.token) });
    for (let i = 0; i < 10; i++) {
      const made = await request();
      expect(made.status).toBe(201);
      expect((await call("POST", `/customer/upgrades/${made.body.request_id}/cancel`, { headers: bearer(a.token) })).status).toBe(200);
    }
    const refused = await request();
    expectErrorShape(refused, 429, "quota_exceeded");
    expect(refused.body.limit).toBe("upgrade_requests_per_day");
  });

  test("at most 20,000 Idempotency-Key records per tenant: a new key is 429 quota_exceeded idempotency_keys", async () => {
    const { db } = await testService();
    const a = await signup();
    await testQuery(db, "idempotency_fill", [a.tenantId, 20_000]);
    const refused = await createKey(a.token, "keyed", { "idempotency-key": "one-more" });
    expectErrorShape(refused, 429, "quota_exceeded");
    expect(refused.body.limit).toBe("idempotency_keys");
    // Without the header the request runs; another tenant is unaffected.
    expect((await createKey(a.token, "plain")).status).toBe(201);
    const b = await signup();
    expect((await createKey(b.token, "keyed", { "idempotency-key": "one-more" })).status).toBe(201);
  });
});
