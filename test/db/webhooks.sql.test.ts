// The webhook rules of sql/schema/04_webhooks.sql called directly: the procedures in transactions
// that are rolled back; the guards by statements a person with psql could write (test/sql/), each
// refused by the database itself. An endpoint moves active -> disabled -> deleted and nothing comes
// back; what it is never changes; no row is deleted; at most 10 per tenant; a delivery's log row
// changes only in its status code; webhook_emit() fans out to the subscribed endpoints.
import { describe, expect, test } from "bun:test";
import type { Queryable } from "../../src/db/index.ts";
import { newId } from "../../src/ids.ts";
import { retryDelaySeconds } from "../../src/outbox/queue.ts";
import { WEBHOOK } from "../../src/webhooks/outbox.ts";
import { newToken } from "../../src/accounts/tokens.ts";
import { testService, uniqueEmail } from "../helpers/service.ts";
import { rolledBackIn, SQL_PASSWORD_HASH, sqlstate, sqlTenant, testOne, testQuery } from "../helpers/sql.ts";

const NOW = "2030-01-01T00:00:00.000Z";

const rolledBack = async (fn: (q: Queryable) => Promise<void>) => rolledBackIn((await testService()).db, fn);
const db = async () => (await testService()).db;

const SEALED = "v1.AAAAAAAAAAAAAAAA.c2VhbGVkIGZvciB0ZXN0cw";
const OTHER_SEALED = "v1.BBBBBBBBBBBBBBBB.YW5vdGhlciBzZWFsZWQ";
const URL = "https://93.184.215.14/hook";

/** A tenant with an endpoint, made by an operator (no member) through the product's procedure. */
async function withEndpoint(q: Queryable, events = ["*"]) {
  const t = await sqlTenant(q, "hooks");
  const webhookId = newId("whk_");
  await q.query("webhooks/create", [webhookId, t.tenantId, null, URL, events, null, SEALED]);
  return { ...t, webhookId };
}

type Endpoint = Awaited<ReturnType<typeof withEndpoint>>;

/** The SQLSTATE of the last statement of `act` on a fresh endpoint, in a rolled-back transaction (a refusal aborts it). */
async function refusal(act: (q: Queryable, e: Endpoint) => Promise<unknown>): Promise<string> {
  let state = "";
  await rolledBack(async (q) => {
    state = await sqlstate(act(q, await withEndpoint(q)));
  });
  return state;
}

describe("an endpoint's states (procedures, rolled back)", () => {
  test("active -> disabled (a 410) -> deleted; disabling twice, or a deleted one, answers false", async () => {
    await rolledBack(async (q) => {
      const e = await withEndpoint(q);
      expect(await q.query("webhooks/disable", [e.tenantId, e.webhookId, "the endpoint answered 410 Gone", null])).toEqual([{ disabled: true }]);
      expect(await q.query("webhooks/disable", [e.tenantId, e.webhookId, "again", null])).toEqual([{ disabled: false }]);
      expect(await q.query("webhooks/list", [e.tenantId])).toEqual([expect.objectContaining({ webhook_id: e.webhookId, status: "disabled" })]);
      // A disabled endpoint can still have its secret rotated, and be deleted.
      expect(await q.query("webhooks/rotate_secret", [e.tenantId, null, e.webhookId, OTHER_SEALED])).toHaveLength(1);
      expect(await q.query("webhooks/delete", [e.tenantId, null, e.webhookId])).toEqual([{ webhook_id: e.webhookId, url: URL }]);
      expect(await q.query("webhooks/list", [e.tenantId])).toEqual([]);
      expect(await q.query("webhooks/disable", [e.tenantId, e.webhookId, "again", null])).toEqual([{ disabled: false }]);
      // Deleted is final: no second delete, no rotation, no test; its secrets are gone.
      expect(await q.query("webhooks/delete", [e.tenantId, null, e.webhookId])).toEqual([]);
      expect(await q.query("webhooks/rotate_secret", [e.tenantId, null, e.webhookId, SEALED])).toEqual([]);
      expect(await q.query("webhooks/test", [e.tenantId, null, e.webhookId])).toEqual([]);
      expect(await q.query("webhooks/for_delivery", [e.tenantId, e.webhookId])).toEqual([
        { webhook_id: e.webhookId, tenant_id: e.tenantId, url: URL, status: "deleted", secret_sealed: null, previous_secret_sealed: null },
      ]);
    });
  });

  test("a test of a disabled endpoint is WH003; another tenant's endpoint is no row (404); its deliveries WH004", async () => {
    expect(await refusal(async (q, e) => {
      await q.query("webhooks/disable", [e.tenantId, e.webhookId, "gone", null]);
      return q.query("webhooks/test", [e.tenantId, null, e.webhookId]);
    })).toBe("WH003");
    await rolledBack(async (q) => {
      const [a, b] = [await withEndpoint(q), await withEndpoint(q)];
      expect(await q.query("webhooks/test", [b.tenantId, null, a.webhookId])).toEqual([]);
      expect(await q.query("webhooks/rotate_secret", [b.tenantId, null, a.webhookId, OTHER_SEALED])).toEqual([]);
      expect(await q.query("webhooks/delete", [b.tenantId, null, a.webhookId])).toEqual([]);
    });
    expect(await refusal(async (q, e) => q.query("webhooks/deliveries", [(await sqlTenant(q, "other")).tenantId, e.webhookId, null, 10]))).toBe("WH004");
    expect(await refusal(async (q, e) => {
      await q.query("webhooks/delete", [e.tenantId, null, e.webhookId]);
      return q.query("webhooks/deliveries", [e.tenantId, e.webhookId, null, 10]);
    })).toBe("WH004");
  });

  test("the 61st test event of an endpoint within an hour is WH006; another endpoint has its own 60", async () => {
    expect(await refusal(async (q, e) => {
      for (let i = 0; i < 60; i++) await q.query("webhooks/test", [e.tenantId, null, e.webhookId]);
      const other = newId("whk_");
      await q.query("webhooks/create", [other, e.tenantId, null, URL, ["*"], null, SEALED]);
      expect(await q.query("webhooks/test", [e.tenantId, null, other])).toHaveLength(1);
      return q.query("webhooks/test", [e.tenantId, null, e.webhookId]);
    })).toBe("WH006");
  });

  test("the 11th live endpoint of a tenant is WH002; a deleted one does not count", async () => {
    expect(await refusal(async (q, e) => {
      for (let i = 1; i < 10; i++) await q.query("webhooks/create", [newId("whk_"), e.tenantId, null, URL, ["*"], null, SEALED]);
      await q.query("webhooks/disable", [e.tenantId, e.webhookId, "gone", null]);
      return q.query("webhooks/create", [newId("whk_"), e.tenantId, null, URL, ["*"], null, SEALED]);
    })).toBe("WH002");
    await rolledBack(async (q) => {
      const e = await withEndpoint(q);
      for (let i = 1; i < 10; i++) await q.query("webhooks/create", [newId("whk_"), e.tenantId, null, URL, ["*"], null, SEALED]);
      await q.query("webhooks/delete", [e.tenantId, null, e.webhookId]);
      expect(await q.query("webhooks/create", [newId("whk_"), e.tenantId, null, URL, ["*"], null, SEALED])).toHaveLength(1);
    });
  });

  test("only an admin or an owner makes, rotates, deletes or tests endpoints (WT021); no member of the tenant, none (WT001)", async () => {
    /** A member of the endpoint's tenant with `role`, joined through an accepted invitation. */
    const member = async (q: Queryable, e: Endpoint, role: string) => {
      const [owner] = await q.query("members/list", [e.tenantId]);
      const token = newToken();
      await q.query("members/invite", [newId("inv_"), e.tenantId, owner!.member_id, uniqueEmail(role), role, token, `v1.AAAAAAAAAAAAAAAA.${token}`, {}, NOW]);
      const [row] = await q.query("members/invitation_accept", [token, null, newId("acct_"), SQL_PASSWORD_HASH, newId("mbr_"), NOW]);
      return row!.member_id;
    };
    for (const role of ["developer", "approver", "viewer"]) {
      expect(await refusal(async (q, e) => q.query("webhooks/create", [newId("whk_"), e.tenantId, await member(q, e, role), URL, ["*"], null, SEALED]))).toBe("WT021");
      expect(await refusal(async (q, e) => q.query("webhooks/rotate_secret", [e.tenantId, await member(q, e, role), e.webhookId, OTHER_SEALED]))).toBe("WT021");
      expect(await refusal(async (q, e) => q.query("webhooks/delete", [e.tenantId, await member(q, e, role), e.webhookId]))).toBe("WT021");
      expect(await refusal(async (q, e) => q.query("webhooks/test", [e.tenantId, await member(q, e, role), e.webhookId]))).toBe("WT021");
    }
    await rolledBack(async (q) => {
      const e = await withEndpoint(q);
      const admin = await member(q, e, "admin");
      expect(await q.query("webhooks/create", [newId("whk_"), e.tenantId, admin, URL, ["*"], null, SEALED])).toHaveLength(1);
      expect(await q.query("webhooks/test", [e.tenantId, admin, e.webhookId])).toHaveLength(1);
    });
    expect(await refusal(async (q, e) => q.query("webhooks/create", [newId("whk_"), e.tenantId, newId("mbr_"), URL, ["*"], null, SEALED]))).toBe("WT001");
    expect(await refusal(async (q, e) => q.query("webhooks/delete", [e.tenantId, newId("mbr_"), e.webhookId]))).toBe("WT001");
  });

  test("a rotation keeps the replaced secret for 24 hours; a second one drops the first at once", async () => {
    await rolledBack(async (q) => {
      const e = await withEndpoint(q);
      const [rotated] = await q.query("webhooks/rotate_secret", [e.tenantId, null, e.webhookId, OTHER_SEALED]);
      expect((Date.parse(rotated!.previous_secret_until) - Date.now()) / 3_600_000).toBeCloseTo(24, 1);
      expect(await q.query("webhooks/for_delivery", [e.tenantId, e.webhookId])).toEqual([expect.objectContaining({ secret_sealed: OTHER_SEALED, previous_secret_sealed: SEALED })]);
      const third = "v1.CCCCCCCCCCCCCCCC.dGhpcmQ";
      await q.query("webhooks/rotate_secret", [e.tenantId, null, e.webhookId, third]);
      expect(await q.query("webhooks/for_delivery", [e.tenantId, e.webhookId])).toEqual([expect.objectContaining({ secret_sealed: third, previous_secret_sealed: OTHER_SEALED })]);
    });
  });

  test("the table refuses what no procedure writes: a secret in the clear, a bad URL or subscription", async () => {
    const create = (q: Queryable, e: Endpoint, url: string, events: string[], sealed: string) => q.query("webhooks/create", [newId("whk_"), e.tenantId, null, url, events, null, sealed]);
    expect(await refusal((q, e) => create(q, e, URL, ["*"], "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="))).toBe("23514");
    expect(await refusal((q, e) => create(q, e, "http://93.184.215.14/hook", ["*"], SEALED))).toBe("23514");
    expect(await refusal((q, e) => create(q, e, `https://93.184.215.14/${"a".repeat(2000)}`, ["*"], SEALED))).toBe("23514");
    expect(await refusal((q, e) => create(q, e, URL, [], SEALED))).toBe("23514");
    expect(await refusal((q, e) => create(q, e, URL, ["Approval.Requested"], SEALED))).toBe("23514");
    expect(await refusal((q, e) => create(q, e, URL, ["*", "*"], SEALED))).toBe("23514");
    expect(await refusal((q, e) => q.query("webhooks/rotate_secret", [e.tenantId, null, e.webhookId, "whsec_plain"]))).toBe("23514");
  });
});

describe("the guards, against statements made by hand", () => {
  /** A committed endpoint of a new tenant (test SQL runs outside the procedures' transactions). */
  async function committed(): Promise<Endpoint> {
    return withEndpoint(await db());
  }
  const refusedBy = async (name: string, params: unknown[]) => sqlstate(testQuery(await db(), name, params));

  test("disabled -> active is refused (WH001), and so is any change of a deleted endpoint", async () => {
    const e = await committed();
    expect(await testQuery(await db(), "webhook_set_status", [e.webhookId, "disabled", new Date().toISOString()])).toEqual([{ status: "disabled" }]);
    expect(await refusedBy("webhook_set_status", [e.webhookId, "active", new Date().toISOString()])).toBe("WH001");
    const d = await committed();
    await (await db()).query("webhooks/delete", [d.tenantId, null, d.webhookId]);
    expect(await refusedBy("webhook_set_status", [d.webhookId, "active", new Date().toISOString()])).toBe("WH001");
    expect(await refusedBy("webhook_set_status", [d.webhookId, "disabled", new Date().toISOString()])).toBe("WH001");
  });

  test("the URL (or anything an endpoint is) never changes, and no endpoint row is ever deleted (WH001)", async () => {
    const e = await committed();
    expect(await refusedBy("webhook_set_url", [e.webhookId, "https://93.184.215.15/elsewhere"])).toBe("WH001");
    expect(await refusedBy("webhook_delete_raw", [e.webhookId])).toBe("WH001");
    expect((await testOne(await db(), "webhook_row", [e.webhookId]))).toMatchObject({ url: URL, status: "active" });
  });

  test("an endpoint is born active with one secret (WH001); a deleted status needs its secrets gone and a time (23514)", async () => {
    const t = await sqlTenant(await db(), "raw");
    expect(await refusedBy("webhook_insert_raw", [newId("whk_"), t.tenantId, "disabled", SEALED])).toBe("WH001");
    expect(await refusedBy("webhook_insert_raw", [newId("whk_"), t.tenantId, "deleted", SEALED])).toBe("WH001");
    const e = await committed();
    // Deleted by hand without erasing the secret or stamping the time: the table's CHECKs refuse it.
    expect(await refusedBy("webhook_set_status", [e.webhookId, "deleted", new Date().toISOString()])).toBe("23514");
  });

  test("a delivery's log row changes only in its last status code, and is never deleted (WH005)", async () => {
    const e = await committed();
    const [queued] = await (await db()).query("webhooks/test", [e.tenantId, null, e.webhookId]);
    expect(await refusedBy("webhook_delivery_update", [queued!.delivery_id, "approval.approved"])).toBe("WH005");
    expect(await refusedBy("webhook_delivery_delete", [queued!.delivery_id])).toBe("WH005");
    const [row] = await testQuery<{ id: number }>(await db(), "webhook_outbox", [e.webhookId]);
    expect(await (await db()).query("webhooks/attempted", [e.tenantId, row!.id, 503])).toEqual([{ recorded: true }]);
    expect(await testQuery(await db(), "webhook_outbox", [e.webhookId])).toEqual([expect.objectContaining({ delivery_id: queued!.delivery_id, last_status_code: 503 })]);
  });
});

describe("webhook_emit() and the deliveries it queues", () => {
  test("one delivery per subscribed active endpoint, in the caller's transaction; 22023 for a bad type or data", async () => {
    const t = await sqlTenant(await db(), "emit");
    const id = () => newId("whk_");
    const [a, b, c] = [id(), id(), id()];
    for (const [webhookId, events] of [[a, ["approval.requested"]], [b, ["*"]], [c, ["approval.denied"]]] as const) {
      await (await db()).query("webhooks/create", [webhookId, t.tenantId, null, URL, [...events], null, SEALED]);
    }
    expect(await testOne(await db(), "webhook_emit", [t.tenantId, "approval.requested", { approval_id: "apv_1" }])).toEqual({ queued: 2 });
    expect(await testOne(await db(), "webhook_emit", [t.tenantId, "approval.denied", { approval_id: "apv_1" }])).toEqual({ queued: 2 });
    expect(await testOne(await db(), "webhook_emit", [t.tenantId, "approval.executed", {}])).toEqual({ queued: 1 });
    const rows = async (webhookId: string) => (await testQuery<{ event: string; kind: string; delivery_id: string }>(await db(), "webhook_outbox", [webhookId])).map((r) => r.event);
    expect(await rows(a)).toEqual(["approval.requested"]);
    expect(await rows(b)).toEqual(["approval.requested", "approval.denied", "approval.executed"]);
    expect(await rows(c)).toEqual(["approval.denied"]);
    expect(await sqlstate(testQuery(await db(), "webhook_emit", [t.tenantId, "Approval Requested", {}]))).toBe("22023");
    expect(await sqlstate(testQuery(await db(), "webhook_emit", [t.tenantId, "approval.requested", [1, 2]]))).toBe("22023");
    // A refused emit queued nothing, even to the endpoints it reached first.
    expect(await rows(b)).toHaveLength(3);
    // Delivery ids: dlv_ and 22 base62 characters, all different.
    const ids = (await testQuery<{ delivery_id: string }>(await db(), "webhook_outbox", [b])).map((r) => r.delivery_id);
    expect(new Set(ids).size).toBe(3);
    for (const deliveryId of ids) expect(deliveryId).toMatch(/^dlv_[0-9A-Za-z]{22}$/);
  });

  test("deleting or disabling an endpoint fails its pending deliveries, but the one the worker holds", async () => {
    await rolledBack(async (q) => {
      const e = await withEndpoint(q);
      const [first] = await q.query("webhooks/test", [e.tenantId, null, e.webhookId]);
      const [second] = await q.query("webhooks/test", [e.tenantId, null, e.webhookId]);
      const page = await q.query("webhooks/deliveries", [e.tenantId, e.webhookId, null, 10]);
      const held = page.find((d) => d.delivery_id === first!.delivery_id)!.page_position;
      expect(await q.query("webhooks/disable", [e.tenantId, e.webhookId, "the endpoint answered 410 Gone", held])).toEqual([{ disabled: true }]);
      const after = await q.query("webhooks/deliveries", [e.tenantId, e.webhookId, null, 10]);
      expect(after.map((d) => [d.delivery_id, d.status])).toEqual([
        [second!.delivery_id, "failed"],
        [first!.delivery_id, "pending"],
      ]);
    });
  });

  test("a failed attempt waits what the channel's schedule says: outbox_attempt_failed() agrees with retryDelaySeconds()", async () => {
    const q = await db();
    const e = await withEndpoint(q);
    const { maxAttempts, baseSeconds, capSeconds } = WEBHOOK.retry;
    for (const attempts of [1, 2, 6, 10, 17]) {
      const [queued] = await q.query("webhooks/test", [e.tenantId, null, e.webhookId]);
      const row = (await testQuery<{ id: number; delivery_id: string }>(q, "webhook_outbox", [e.webhookId])).find((r) => r.delivery_id === queued!.delivery_id)!;
      await testQuery(q, "mail_outbox_set_attempts", [row.id, attempts]);
      expect(await q.query("outbox/attempt_failed", [row.id, "HTTP 500", false, maxAttempts, baseSeconds, capSeconds])).toEqual([{ status: "pending" }]);
      const [next] = await testQuery<{ status: string; seconds: number }>(q, "outbox_next_in", [row.id]);
      expect([attempts, Math.round(next!.seconds)]).toEqual([attempts, retryDelaySeconds(WEBHOOK.retry, attempts)]);
    }
    // The 18th failed attempt ends the delivery.
    const [last] = await q.query("webhooks/test", [e.tenantId, null, e.webhookId]);
    const row = (await testQuery<{ id: number; delivery_id: string }>(q, "webhook_outbox", [e.webhookId])).find((r) => r.delivery_id === last!.delivery_id)!;
    await testQuery(q, "mail_outbox_set_attempts", [row.id, maxAttempts]);
    expect(await q.query("outbox/attempt_failed", [row.id, "HTTP 500", false, maxAttempts, baseSeconds, capSeconds])).toEqual([{ status: "failed" }]);
  });

  test("an outbox row of the webhook channel names an endpoint (23514 otherwise)", async () => {
    await rolledBack(async (q) => {
      expect(await sqlstate(q.query("outbox/enqueue", ["webhook", "webhook.test", "someone@example.com", null, {}]))).toBe("23514");
    });
  });

  test("random_base62: ids minted in SQL are 22 base62 characters, never the same twice", async () => {
    await rolledBack(async (q) => {
      const e = await withEndpoint(q);
      const ids = [];
      for (let i = 0; i < 50; i++) ids.push((await q.query("webhooks/test", [e.tenantId, null, e.webhookId]))[0]!.delivery_id);
      expect(new Set(ids).size).toBe(50);
      // Every character of the alphabet can appear; none outside it does.
      const chars = new Set(ids.join("").replace(/dlv_/g, ""));
      expect([...chars].every((ch) => /[0-9A-Za-z]/.test(ch))).toBe(true);
      expect(chars.size).toBeGreaterThan(50);
    });
  });
});
