// key.expiring (docs/api.md, "Keys for agents"): api_keys_expiring_sweep() tells of each key once
// when it comes within 7 days of its expiry and once more within 1 day, again for a new expiry,
// and queues the event to the tenant's webhooks (webhook_emit()) in the same transaction.
import { beforeAll, describe, expect, test } from "bun:test";
import type { Db } from "../../src/db/index.ts";
import { sweepExpiringKeys } from "../../src/keys/expiring.ts";
import { bearer } from "../helpers/customer.ts";
import { call, signup, testService } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

let db: Db;
beforeAll(async () => {
  db = (await testService()).db;
});

/**
 * The notices given for the key's current expiry after a sweep, and what a second sweep told of
 * it (nothing: each once). The service's own sweeper may have run first: the notices are the same.
 */
async function sweptTwice(keyId: string) {
  await sweepExpiringKeys(db);
  const again = (await sweepExpiringKeys(db)).filter((r) => r.key_id === keyId);
  expect(again).toEqual([]);
  return (await testQuery<{ threshold: string }>(db, "key_expiry_notices", [keyId])).map((r) => r.threshold);
}

async function newKey(label: string, json: Record<string, unknown> = {}) {
  const a = await signup();
  const created = await call("POST", "/customer/keys", { json: { label, ...json }, headers: bearer(a.token) });
  expect(created.status).toBe(201);
  return { ...a, keyId: created.body.key_id as string };
}

describe("api_keys_expiring_sweep", () => {
  test("7 days before, then 1 day before, each once; a new expiry is told again; keys without one or far off never", async () => {
    const far = await newKey("far", { expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() });
    const never = await newKey("never");
    const k = await newKey("soon", { expires_at: new Date(Date.now() + 5 * 86_400_000).toISOString() });
    expect(await sweptTwice(k.keyId)).toEqual(["7d"]);
    await testQuery(db, "key_set_expiry", [k.keyId, 6 * 86_400]);
    expect(await sweptTwice(k.keyId)).toEqual(["7d"]); // another expiry: told again
    await testQuery(db, "key_set_expiry", [k.keyId, 12 * 3600]);
    expect(await sweptTwice(k.keyId)).toEqual(["1d"]);
    // A new expiry by PATCH, within 7 days: told again.
    expect((await call("PATCH", `/customer/keys/${k.keyId}`, { json: { expires_at: new Date(Date.now() + 5 * 86_400_000).toISOString() }, headers: bearer(k.token) })).status).toBe(200);
    expect(await sweptTwice(k.keyId)).toEqual(["7d"]);
    // Crossing both at once (created 2 hours before expiry): the nearer only.
    const late = await newKey("late", { expires_at: new Date(Date.now() + 2 * 3600_000).toISOString() });
    expect(await sweptTwice(late.keyId)).toEqual(["1d"]);
    expect([...(await sweptTwice(far.keyId)), ...(await sweptTwice(never.keyId))]).toEqual([]);
    // A revoked key is not told of.
    const revoked = await newKey("revoked", { expires_at: new Date(Date.now() + 3 * 86_400_000).toISOString() });
    expect((await call("POST", `/customer/keys/${revoked.keyId}/revoke`, { headers: bearer(revoked.token) })).status).toBe(200);
    expect(await sweptTwice(revoked.keyId)).toEqual([]);
  });

  test("queues key.expiring {key_id, label, expires_at, threshold} to the tenant's endpoints subscribed to it, with the notice", async () => {
    const user = await signup();
    const hook = async (events: string[]) => {
      const reply = await call("POST", "/customer/webhooks", { json: { url: "https://93.184.215.14/hooks/warden", events }, headers: bearer(user.token) });
      expect(reply.status).toBe(201);
      return reply.body.webhook_id as string;
    };
    const [subscribed, all, other] = [await hook(["key.expiring"]), await hook(["*"]), await hook(["approval.requested"])];
    const expires = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const created = await call("POST", "/customer/keys", { json: { label: "agent", expires_at: expires }, headers: bearer(user.token) });
    expect(await sweptTwice(created.body.key_id)).toEqual(["7d"]);
    for (const webhookId of [subscribed, all]) {
      const deliveries = await testQuery<Record<string, any>>(db, "webhook_outbox", [webhookId]);
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({ event: "key.expiring", data: { data: { key_id: created.body.key_id, label: "agent", expires_at: expires, threshold: "7d" } } });
    }
    expect(await testQuery(db, "webhook_outbox", [other])).toEqual([]);
    // The subscription itself: key.expiring is an event an endpoint may name.
    expect(await hook(["key.expiring", "approval.denied"])).toMatch(/^whk_/);
  });
});
