// The audit trail's database rules, called as the service calls them, rolled back where the check
// allows it: events join the receipt chain (receipt_event_append), count toward no quota nor
// storage, keep the shape of an event (no key, no decision, a payload of kind "event"), heads count
// them exactly, and operators' procedures queue their events (audit_outbox), which change only by
// being appended once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db, Queryable } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { newId } from "../../src/ids.ts";
import { canonicalJson, sha256Hex } from "../../src/crypto/canonical.ts";
import { chainHash } from "../../src/receipts/chain.ts";
import { buildPayload } from "../../src/decide/payload.ts";
import { runOpsScript } from "../../src/ops/scripts.ts";
import { openTestDb } from "../helpers/service.ts";
import { rolledBackIn, sqlTenant, sqlstate, testOne, testQuery } from "../helpers/sql.ts";

let db: Db;

beforeAll(async () => {
  db = await openTestDb();
  await migrate(db);
}, 60_000);
afterAll(async () => {
  await db?.close();
});

const rolledBack = (fn: (q: Queryable) => Promise<void>) => rolledBackIn(db, fn);


/** The SQLSTATE of what act raises, in a transaction of its own (a refusal aborts it), rolled back. */
async function refusal(act: (q: Queryable) => Promise<unknown>): Promise<string> {
  let state = "";
  await rolledBack(async (q) => {
    state = await sqlstate(act(q));
  });
  return state;
}

/**
 * An event as the service hands it to receipt_event_append (the signature's shape is all the
 * database checks); `payload` changes its payload, a field set to null is left out.
 */
async function eventItem(tenantId: string, payload: Record<string, unknown> = {}, at = new Date()) {
  const fields = { v: 2, kind: "event", event: "key.revoked", actor: { member_id: "mbr_x" }, target: { key_id: "key_x" }, at: at.toISOString(), ...payload };
  const text = canonicalJson(Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null)));
  return { receipt_id: newId("rcpt_"), tenant_id: tenantId, request_id: newId("req_"), timestamp: at.toISOString(), payload: text, content_hash: await sha256Hex(text), signature: "aaa.bbb.ccc" };
}

async function decisionItem(t: { tenantId: string; keyId: string }) {
  const payload = canonicalJson(buildPayload({ kind: "protect", input: { action: "document.read" }, policy: { policy_id: "pol_default", version: 1, hash: "0x" + "ab".repeat(32) }, decision: "ALLOWED", reasons: ["r"], rule: null }));
  return {
    receipt_id: newId("rcpt_"), tenant_id: t.tenantId, key_id: t.keyId, kind: "protect", request_id: newId("req_"), timestamp: new Date().toISOString(),
    decision: "ALLOWED", payload, content_hash: await sha256Hex(payload), signature: "aaa.bbb.ccc", protect_receipt_id: null,
  };
}

describe("receipt_event_append", () => {
  test("events continue the tenant's chain among its decisions, with the chain hash of their claims (no key), in input order", async () => {
    await rolledBack(async (q) => {
      const t = await sqlTenant(q, "audit");
      const [d0] = await q.query("receipts/append", [[await decisionItem(t)]]);
      const events = [await eventItem(t.tenantId), await eventItem(t.tenantId, { event: "member.invited" })];
      const rows = await q.query("audit/append", [events]);
      expect(rows.map((r) => [r.receipt_id, r.seq])).toEqual([[events[0].receipt_id, 1], [events[1].receipt_id, 2]]);
      expect(rows[0].prev_hash).toBe(d0.chain_hash);
      expect(rows[1].prev_hash).toBe(rows[0].chain_hash);
      for (const [i, e] of events.entries()) {
        const link = { receipt_id: e.receipt_id, tenant_id: t.tenantId, key_id: null, kind: "event" as const, request_id: e.request_id, timestamp: e.timestamp, content_hash: e.content_hash, protect_receipt_id: null };
        expect(rows[i].chain_hash).toBe(await chainHash({ ...link, prev: rows[i].prev_hash, seq: rows[i].seq }));
      }
      // A decision after them links to the last event.
      const [d3] = await q.query("receipts/append", [[await decisionItem(t)]]);
      expect([d3.seq, d3.prev_hash]).toEqual([3, rows[1].chain_hash]);
      expect(await q.one("receipts/head", [t.tenantId])).toEqual({ tenant_id: t.tenantId, tree_size: 4, head_hash: d3.chain_hash, event_count: 2 });
      const stored = await q.one("audit/list", [t.tenantId, null, null, null, 10]);
      expect(stored).toMatchObject({ receipt_id: events[1].receipt_id, kind: "event", key_id: null, decision: null, event: "member.invited" });
    });
  });

  test("events count toward neither storage nor the day's quota: receipts_stored and the day's counts are the decisions'", async () => {
    await rolledBack(async (q) => {
      const t = await sqlTenant(q, "audit");
      await q.query("receipts/append", [[await decisionItem(t)]]);
      await q.query("audit/append", [[await eventItem(t.tenantId), await eventItem(t.tenantId), await eventItem(t.tenantId)]]);
      expect(await q.one("receipts/usage_summary", [t.tenantId, null])).toMatchObject({ protect_today: 1, execute_today: 0, receipts_stored: 1 });
    });
  });

  test("the shape of an event: its payload says kind event and names an event; no key, no decision; receipt_append takes no events", async () => {
    const t = await sqlTenant(db, "audit");
    // 23514: the receipts CHECKs (receipts_event_matches_kind, the event column's).
    expect(await refusal(async (q) => q.query("audit/append", [[await eventItem(t.tenantId, { kind: "protect" })]]))).toBe("23514");
    expect(await refusal(async (q) => q.query("audit/append", [[await eventItem(t.tenantId, { event: null })]]))).toBe("23514");
    expect(await refusal(async (q) => q.query("audit/append", [[await eventItem(t.tenantId, { event: "Key Revoked" })]]))).toBe("23514");
    const decision = await decisionItem(t);
    // A decision's payload is no event.
    expect(await refusal((q) => q.query("audit/append", [[decision]]))).toBe("23514");
    expect(await refusal(async (q) => q.query("audit/append", [[{ ...(await eventItem(t.tenantId)), timestamp: "2030-01-01T00:00:00Z" }]]))).toBe("22007");
    expect(await refusal(async (q) => q.query("receipts/append", [[{ ...(await eventItem(t.tenantId)), key_id: t.keyId, kind: "event", decision: null, protect_receipt_id: null }]]))).toBe("22023");
    // Written around receipt_event_append: an event naming a key, or a decision naming none (23514, receipts_decision_matches_kind).
    const event = await eventItem(t.tenantId);
    const raw = (row: Record<string, unknown>) => testQuery(db, "receipt_insert_raw", [[{ ...row, seq: 0, prev_hash: null, chain_hash: "0x" + "00".repeat(32) }]]);
    expect(await sqlstate(raw({ ...event, kind: "event", key_id: t.keyId, decision: null }))).toBe("23514");
    expect(await sqlstate(raw({ ...decision, key_id: null }))).toBe("23514");
    expect(await sqlstate(raw({ ...event, kind: "event", key_id: null, decision: "ALLOWED" }))).toBe("23514");
  });

  test("a head advances only counting exactly the events it passes (WR001)", async () => {
    const t = await sqlTenant(db, "audit");
    const [d] = await db.query("receipts/append", [[await decisionItem(t)]]);
    const e = await eventItem(t.tenantId);
    const link = { receipt_id: e.receipt_id, tenant_id: t.tenantId, key_id: null, kind: "event" as const, request_id: e.request_id, timestamp: e.timestamp, content_hash: e.content_hash, protect_receipt_id: null };
    const chain = await chainHash({ ...link, prev: d.chain_hash, seq: 1 });
    // The event written with the chain trigger off, so that the head is moved by hand, as a forger would.
    await testQuery(db, "receipts_link_and_grow_off");
    try {
      await testQuery(db, "receipt_insert_raw", [[{ ...e, kind: "event", key_id: null, decision: null, seq: 1, prev_hash: d.chain_hash, chain_hash: chain }]]);
      expect(await sqlstate(testQuery(db, "receipt_heads_advance", [t.tenantId, 2, chain, 0]))).toBe("WR001");
      expect(await sqlstate(testQuery(db, "receipt_heads_advance", [t.tenantId, 2, chain, 2]))).toBe("WR001");
      expect(await testQuery(db, "receipt_heads_advance", [t.tenantId, 2, chain, 1])).toEqual([{ tree_size: 2, event_count: 1 }]);
    } finally {
      await testQuery(db, "receipts_link_and_grow_on");
    }
  });

  test("a head counts its events exactly: no UPDATE moves the count to free storage (WR001)", async () => {
    const t = await sqlTenant(db, "audit");
    await db.query("receipts/append", [[await decisionItem(t)]]);
    await db.query("audit/append", [[await eventItem(t.tenantId)]]);
    expect((await db.one("receipts/head", [t.tenantId]))!.event_count).toBe(1);
    expect(await sqlstate(testQuery(db, "receipt_heads_set_events", [t.tenantId, 2]))).toBe("WR001");
    expect(await sqlstate(testQuery(db, "receipt_heads_set_events", [t.tenantId, 0]))).toBe("WR001");
    expect(await db.one("receipts/usage_summary", [t.tenantId, null])).toMatchObject({ receipts_stored: 1 });
  });
});

describe("operators' events (audit_outbox)", () => {
  test("each operator procedure queues its event with the reviewer it names, in its own transaction; a no-op queues none", async () => {
    const t = await sqlTenant(db, "audit-ops");
    const [request] = await db.query("plans/upgrade_create", [newId("upgr_"), t.tenantId, "pro", "ops", null]);
    const [approved] = await runOpsScript<{ reviewed_at: string }>(db, "ops/upgrades_approve", { request_id: request.request_id, reviewer: "ops-alice" });
    const [again] = await db.query("plans/upgrade_create", [newId("upgr_"), t.tenantId, "enterprise", "more", null]);
    await runOpsScript(db, "ops/upgrades_reject", { request_id: again.request_id, reviewer: "ops-bob", note: "not yet" });
    await runOpsScript(db, "ops/features_grant", { tenant_id: t.tenantId, feature: "sso", reviewer: "ops-carol" });
    await runOpsScript(db, "ops/features_grant", { tenant_id: t.tenantId, feature: "sso", reviewer: "ops-carol" });
    await runOpsScript(db, "ops/features_revoke", { tenant_id: t.tenantId, feature: "sso", reviewer: " " });
    await runOpsScript(db, "ops/features_revoke", { tenant_id: t.tenantId, feature: "sso", reviewer: "ops-dan" });
    await runOpsScript(db, "ops/sessions_end", { tenant_id: t.tenantId, reviewer: "ops-erin" });
    const rows = await testQuery<{ event: string; operator: string; target: unknown; at: string; receipt_id: string | null }>(db, "audit_outbox_rows", [t.tenantId]);
    expect(rows.map((r) => [r.event, r.operator, r.target])).toEqual([
      ["upgrade.approved", "ops-alice", { request_id: request.request_id, plan: "pro", previous_plan: "free" }],
      ["upgrade.rejected", "ops-bob", { request_id: again.request_id, plan: "enterprise" }],
      ["feature.granted", "ops-carol", { feature: "sso" }],
      ["feature.revoked", "operator", { feature: "sso" }],
      ["sessions.ended", "ops-erin", { members: 1 }],
    ]);
    // `at` is the change's own time: the review's, for the approval.
    expect(rows[0].at).toBe(approved.reviewed_at);
  });

  test("a refused procedure queues nothing: the change and its pending event commit together", async () => {
    const t = await sqlTenant(db, "audit-ops");
    const [request] = await db.query("plans/upgrade_create", [newId("upgr_"), t.tenantId, "pro", "ops", null]);
    await runOpsScript(db, "ops/upgrades_approve", { request_id: request.request_id, reviewer: "ops-alice" });
    expect(await sqlstate(runOpsScript(db, "ops/upgrades_approve", { request_id: request.request_id, reviewer: "ops-alice" }))).toBe("WU002");
    expect(await sqlstate(runOpsScript(db, "ops/features_grant", { tenant_id: t.tenantId, feature: "custom_policy", reviewer: "ops-alice" }))).toBe("WU004");
    expect((await testQuery(db, "audit_outbox_rows", [t.tenantId])).length).toBe(1);
  });

  test("a queued event is appended once, as one receipt, and otherwise never changes nor goes (WR010)", async () => {
    const t = await sqlTenant(db, "audit-ops");
    await testQuery(db, "audit_outbox_add", [t.tenantId, "feature.granted", "ops-alice", { feature: "sso" }]);
    const [row] = await testQuery<{ id: number }>(db, "audit_outbox_rows", [t.tenantId]);
    expect(await sqlstate(testQuery(db, "audit_outbox_update", [row.id]))).toBe("WR010");
    expect(await sqlstate(testQuery(db, "audit_outbox_delete", [row.id]))).toBe("WR010");
    // Marked appended once: here, or by the worker of a service running on this database meanwhile.
    await db.query("audit/outbox_appended", [t.tenantId, row.id, newId("rcpt_")]);
    const marked = (await testOne<{ receipt_id: string | null }>(db, "audit_outbox_rows", [t.tenantId]))!.receipt_id;
    expect(marked).toMatch(/^rcpt_/);
    // A second attempt finds nothing to mark, and a forced one is refused.
    expect(await db.query("audit/outbox_appended", [t.tenantId, row.id, newId("rcpt_")])).toEqual([]);
    expect(await sqlstate(testQuery(db, "audit_outbox_update", [row.id]))).toBe("WR010");
    expect((await testOne<{ receipt_id: string }>(db, "audit_outbox_rows", [t.tenantId]))!.receipt_id).toBe(marked!);
  });

  test("the worker claims tenant by tenant, each tenant's events in order, the longest waiting first; another claim meanwhile skips them", async () => {
    // A service of this test process may run its audit worker on this database, and take the
    // events first (it appends them): then the claim is tried again with new ones, at most 3 times.
    for (let attempt = 1; ; attempt++) {
      const a = await sqlTenant(db, "audit-claim-a");
      const b = await sqlTenant(db, "audit-claim-b");
      for (const [t, n] of [[a, 1], [b, 1], [a, 2], [b, 2], [a, 3]] as const) {
        await testQuery(db, "audit_outbox_add", [t.tenantId, "feature.granted", "ops-alice", { n }]);
      }
      const ours = (rows: { tenant_id: string; target: unknown }[]) =>
        rows.filter((r) => r.tenant_id === a.tenantId || r.tenant_id === b.tenantId).map((r) => `${r.tenant_id === a.tenantId ? "a" : "b"}${(r.target as { n: number }).n}`);
      let claimed: string[] = [];
      await rolledBack(async (q) => {
        // Other tests' tenants may have events waiting too: these two come in this order among them.
        claimed = ours(await q.query("audit/outbox_claim", [10_000]));
        if (claimed.length < 5) return;
        expect(claimed).toEqual(["a1", "a2", "a3", "b1", "b2"]);
        // Another instance's worker, on a connection of its own, takes none of them while they are held.
        if (db.kind !== "embedded") expect(ours(await db.query("audit/outbox_claim", [10_000]))).toEqual([]);
      });
      if (claimed.length === 5) break;
      // Fewer only when a worker took some: those are appended now, and what was claimed kept the order.
      const appended = (await Promise.all([a, b].map((t) => testQuery<{ receipt_id: string | null }>(db, "audit_outbox_rows", [t.tenantId])))).flat();
      expect(appended.some((r) => r.receipt_id !== null)).toBe(true);
      expect(claimed).toEqual(["a1", "a2", "a3", "b1", "b2"].filter((e) => claimed.includes(e)));
      expect(attempt).toBeLessThan(3);
    }
  });
});
