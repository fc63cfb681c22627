// receipt_append(json), called through sql/queries/receipts/append.sql as the service calls it: a
// batch of many tenants, each refusal code answered per item without an error, refused items
// counting towards nothing, 22007 for a non-canonical timestamp, and the chain trigger refusing a
// forged row. Each test uses tenants of its own; plan limits are set on a plan made for the test
// file (plans are shared, so tests never lower the built-in ones).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DbError, type Db } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { newId } from "../../src/ids.ts";
import { canonicalJson, sha256Hex } from "../../src/crypto/canonical.ts";
import { chainHash } from "../../src/receipts/chain.ts";
import { EXECUTE_WINDOW_MINUTES } from "../../src/decide/payload.ts";
import { openTestDb } from "../helpers/service.ts";
import { planSetAsApproved, sqlTenant, testOne, testQuery } from "../helpers/sql.ts";

let db: Db;

beforeAll(async () => {
  db = await openTestDb();
  await migrate(db);
}, 60_000);
afterAll(async () => {
  await db?.close();
});

type Tenant = { tenantId: string; keyId: string };
type Row = { idx: number; seq: number | null; prev_hash: string | null; chain_hash: string | null; quota_limit: number | null; quota_used: number | null; refusal: string | null };
type Item = Record<string, string | null> & {
  receipt_id: string; tenant_id: string; key_id: string; kind: "protect" | "execute"; timestamp: string; content_hash: string; request_id: string; protect_receipt_id: string | null;
};

async function tenant(plan?: "pro" | "enterprise"): Promise<Tenant> {
  const t = await sqlTenant(db, "append");
  if (plan) await planSetAsApproved(db, t.tenantId, plan);
  return t;
}

async function item(t: Tenant, opts: { kind?: "protect" | "execute"; decision?: "ALLOWED" | "DENIED"; protectId?: string; at?: Date } = {}): Promise<Item> {
  const decision = opts.decision ?? "ALLOWED";
  const payload = canonicalJson({ decision, n: crypto.randomUUID() });
  return {
    receipt_id: newId("rcpt_"), tenant_id: t.tenantId, key_id: t.keyId, kind: opts.kind ?? "protect", request_id: newId("req_"),
    timestamp: (opts.at ?? new Date()).toISOString(), decision, payload, content_hash: await sha256Hex(payload), signature: "aaa.bbb.ccc",
    protect_receipt_id: opts.protectId ?? null,
  };
}

const append = (items: Item[]) => db.query("receipts/append", [items]);
const refusals = (rows: Row[]) => rows.map((r) => r.refusal);
const usage = async (t: Tenant, day?: string) =>
  (await db.one("receipts/usage_summary", [t.tenantId, day ?? null]))!;

describe("receipt_append(json): accepted items", () => {
  test("a batch of many tenants: one row per item in input order, each tenant's items linked in input order, quota_used its place in the day", async () => {
    const [a, b, c] = [await tenant(), await tenant(), await tenant("enterprise")];
    const first = await append([await item(a)]);
    expect(first).toEqual([expect.objectContaining({ idx: 0, seq: 0, prev_hash: null, quota_limit: 1000, quota_used: 1, refusal: null })]);
    const order = [b, a, c, a, b, a, c];
    const items = await Promise.all(order.map((t) => item(t)));
    const rows = await append(items);
    expect(rows.map((r) => r.idx)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(refusals(rows)).toEqual(order.map(() => null));
    expect(rows.map((r) => r.seq)).toEqual([0, 1, 0, 2, 1, 3, 1]);
    expect(rows.map((r) => r.quota_used)).toEqual([1, 2, 1, 3, 2, 4, 2]);
    expect(rows.map((r) => r.quota_limit)).toEqual([1000, 1000, null, 1000, 1000, 1000, null]);
    // Each link is the TypeScript chain of the one before it, starting from the stored head.
    const prev = new Map<string, string | null>([[a.tenantId, first[0].chain_hash], [b.tenantId, null], [c.tenantId, null]]);
    for (const [i, r] of rows.entries()) {
      const it = items[i];
      expect(r.prev_hash).toBe(prev.get(it.tenant_id)!);
      expect(r.chain_hash).toBe(await chainHash({ ...it, prev: r.prev_hash, seq: r.seq! }));
      prev.set(it.tenant_id, r.chain_hash);
    }
    expect(await db.one("receipts/head", [a.tenantId])).toEqual({ tenant_id: a.tenantId, tree_size: 4, head_hash: rows[5].chain_hash, event_count: 0 });
    expect((await usage(a)).protect_today).toBe(4);
  });

  test("an empty batch answers nothing", async () => {
    expect(await append([])).toEqual([]);
  });
});

describe("receipt_append(json): refusals, answered per item", () => {
  test("the execute window is 15 minutes, in SQL and in the TypeScript that names it", async () => {
    expect(EXECUTE_WINDOW_MINUTES).toBe(15);
    expect(await testOne(db, "receipt_execute_window")).toEqual({ minutes: EXECUTE_WINDOW_MINUTES });
  });

  test("execute: WR002 for another tenant's, an unknown or a non-protect receipt; WR003 DENIED; WR004 as old as the window", async () => {
    const [a, other] = [await tenant(), await tenant()];
    const window = EXECUTE_WINDOW_MINUTES * 60_000;
    const old = new Date(Date.now() - window);
    const [allowed, denied, stale, foreign] = [await item(a), await item(a, { decision: "DENIED" }), await item(a, { at: old }), await item(other)];
    await append([allowed, denied, stale, foreign]);
    const exec = await item(a, { kind: "execute", protectId: allowed.receipt_id });
    await append([exec]);
    const rows = await append([
      await item(a, { kind: "execute", protectId: foreign.receipt_id }),
      await item(a, { kind: "execute", protectId: newId("rcpt_") }),
      await item(a, { kind: "execute", protectId: exec.receipt_id }),
      await item(a, { kind: "execute", protectId: denied.receipt_id }),
      await item(a, { kind: "execute", protectId: stale.receipt_id }),
    ]);
    expect(refusals(rows)).toEqual(["WR002", "WR002", "WR002", "WR003", "WR004"]);
    for (const r of rows) expect(r).toMatchObject({ seq: null, prev_hash: null, chain_hash: null, quota_limit: null, quota_used: null });
    // Just within the window is still fine.
    const young = await item(a, { at: new Date(Date.now() - window + 2000) });
    await append([young]);
    expect(refusals(await append([await item(a, { kind: "execute", protectId: young.receipt_id })]))).toEqual([null]);
  });

  test("WR007: executed before (in the table), or earlier in the same batch; the first of a batch is stored", async () => {
    const a = await tenant();
    const [p1, p2] = [await item(a), await item(a)];
    await append([p1, p2]);
    expect(refusals(await append([await item(a, { kind: "execute", protectId: p1.receipt_id })]))).toEqual([null]);
    const rows = await append([
      await item(a, { kind: "execute", protectId: p1.receipt_id }),
      await item(a, { kind: "execute", protectId: p2.receipt_id }),
      await item(a, { kind: "execute", protectId: p2.receipt_id }),
    ]);
    expect(refusals(rows)).toEqual(["WR007", null, "WR007"]);
    expect((await usage(a)).execute_today).toBe(2);
    // The unique index still guards the table against any other writer.
    expect(await testQuery(db, "receipts_execute_once_probe", [p2.receipt_id])).toEqual([{ executes: 1 }]);
  });

  test("an execute may follow its protect in the same call: both stored, linked in order; once only; not another tenant's, not a DENIED one, not before it", async () => {
    const [a, other] = [await tenant(), await tenant()];
    const p = await item(a);
    const denied = await item(a, { decision: "DENIED" });
    const foreign = await item(other);
    const rows = await append([
      await item(a, { kind: "execute", protectId: p.receipt_id }),
      p,
      await item(a, { kind: "execute", protectId: p.receipt_id }),
      await item(a, { kind: "execute", protectId: p.receipt_id }),
      denied,
      await item(a, { kind: "execute", protectId: denied.receipt_id }),
      foreign,
      await item(a, { kind: "execute", protectId: foreign.receipt_id }),
    ]);
    // Before its protect: none yet (WR002); after it: the first stands, the second is WR007.
    expect(refusals(rows)).toEqual(["WR002", null, null, "WR007", null, "WR003", null, "WR002"]);
    expect(rows.map((r) => r.seq)).toEqual([null, 0, 1, null, 2, null, 0, null]);
    expect(await usage(a)).toMatchObject({ protect_today: 2, execute_today: 1, receipts_stored: 3 });
    expect(await testQuery(db, "receipts_execute_once_probe", [p.receipt_id])).toEqual([{ executes: 1 }]);
  });

  test("an execute whose protect in the same call is refused by a later rule (the daily quota) is refused too (WR002), and counts nothing", async () => {
    const a = await tenant();
    const day = new Date().toISOString().slice(0, 10);
    await testQuery(db, "usage_set", [a.tenantId, day, 999, 0]);
    const [fits, over] = [await item(a), await item(a)];
    const rows = await append([fits, await item(a, { kind: "execute", protectId: fits.receipt_id }), over, await item(a, { kind: "execute", protectId: over.receipt_id })]);
    expect(refusals(rows)).toEqual([null, null, "WQ001", "WR002"]);
    expect(await usage(a, day)).toMatchObject({ protect_today: 1000, execute_today: 1, receipts_stored: 2 });
  });

  test("WQ001 / WQ002: a day's quota counts earlier items of the batch; refused items count towards nothing", async () => {
    const a = await tenant();
    const day = new Date().toISOString().slice(0, 10);
    await testQuery(db, "usage_set", [a.tenantId, day, 999, 99]);
    const p = await item(a);
    await append([p]);
    const rows = await append([
      await item(a),
      await item(a, { kind: "execute", protectId: p.receipt_id }),
      await item(a),
      await item(a, { kind: "execute", protectId: newId("rcpt_") }),
    ]);
    expect(refusals(rows)).toEqual(["WQ001", null, "WQ001", "WR002"]);
    expect(rows[1]).toMatchObject({ quota_limit: 100, quota_used: 100, seq: 1 });
    expect(await usage(a, day)).toMatchObject({ protect_today: 1000, execute_today: 100, receipts_stored: 2 });
    const p2 = await item(a, { at: new Date(Date.now() + 86_400_000) });
    // Another UTC day has its own count.
    expect(refusals(await append([p2]))).toEqual([null]);
    const exec = await append([await item(a, { kind: "execute", protectId: p2.receipt_id })]);
    expect(refusals(exec)).toEqual(["WQ002"]);
  });

  test("WQ003: full storage is reported before the daily quota, and the batch fills storage up to the limit exactly", async () => {
    const a = await tenant();
    const day = new Date().toISOString().slice(0, 10);
    await testQuery(db, "usage_set", [a.tenantId, day, 997, 0]);
    await append([await item(a)]);
    // The free plan stores 1000: 998 more on the next UTC day (its own daily count) leave room for one.
    const filler = await Promise.all(Array.from({ length: 998 }, () => item(a, { at: new Date(Date.now() + 86_400_000) })));
    expect((await append(filler)).every((r) => r.refusal === null)).toBe(true);
    const rows = await append([await item(a), await item(a), await item(a)]);
    // The first fits storage (999 -> 1000) and the day (998 -> 999); then storage is full.
    expect(refusals(rows)).toEqual([null, "WQ003", "WQ003"]);
    expect((await usage(a)).receipts_stored).toBe(1000);
    await testQuery(db, "usage_set", [a.tenantId, day, 1000, 0]);
    // Both full: storage first.
    expect(refusals(await append([await item(a)]))).toEqual(["WQ003"]);
  }, 30_000);
});

describe("receipt_append(json): decisions on usage counters (receipt_usage_rules)", () => {
  const WINDOW = "2030-01-01T00:00:00.000Z";
  const reading = (counter: string, before: number, add: number) => ({ usage: [{ counter, scope: "*", window_start: WINDOW, before, add }] });
  /** A protect decided on a counter: ALLOWED adds `add`; null: DENIED (it would have added 1). */
  const onUsage = async (t: Tenant, counter: string, before: number, add: number | null) =>
    Object.assign(await item(t, { decision: add === null ? "DENIED" : "ALLOWED" }), reading(counter, before, add ?? 1)) as Item;
  const total = async (t: Tenant, counter: string) =>
    (await db.query("usage/read", [[t.tenantId], [{ tenant_id: t.tenantId, counter, scope: "*", window_start: WINDOW }]]))[0].exact;

  test("each decision must have read the stored total plus what its tenant's earlier items of the call add", async () => {
    const a = await tenant("pro");
    const rows = await append([await onUsage(a, "c", 0, 1), await onUsage(a, "c", 1, 1), await onUsage(a, "c", 2, null), await onUsage(a, "c", 2, 1)]);
    expect(refusals(rows)).toEqual([null, null, null, null]);
    expect(await total(a, "c")).toBe("3");
  });

  test("a stale total is refused (WB002) with every later decision on usage of its tenant; the rest of the call is stored, and nothing counted for them", async () => {
    const [a, b] = [await tenant("pro"), await tenant("pro")];
    await append([await onUsage(a, "c", 0, 2)]);
    const rows = await append([
      await onUsage(a, "c", 2, 1), // right: stored
      await onUsage(b, "c", 0, 1), // another tenant: stored
      await onUsage(a, "c", 1, 1), // read 1, the counter holds 3: stale
      await item(a), // no usage read: stored
      await onUsage(a, "c", 4, 1), // right only if the one before it had counted: refused with it
      await onUsage(b, "c", 1, 1), // the other tenant goes on
    ]);
    expect(refusals(rows)).toEqual([null, null, "WB002", null, "WB002", null]);
    expect(rows.map((r) => r.seq)).toEqual([1, 0, null, 2, null, 1]);
    expect(await total(a, "c")).toBe("3");
    expect(await total(b, "c")).toBe("2");
  });

  test("amounts are summed exactly and compared as the decision's number: 0.1 + 0.2 read as 0.3", async () => {
    const a = await tenant("pro");
    expect(refusals(await append([await onUsage(a, "eur", 0, 0.1), await onUsage(a, "eur", 0.1, 0.2)]))).toEqual([null, null]);
    expect(await total(a, "eur")).toBe("0.3");
    expect(refusals(await append([await onUsage(a, "eur", 0.1 + 0.2, 1)]))).toEqual(["WB002"]);
    expect(refusals(await append([await onUsage(a, "eur", 0.3, 1)]))).toEqual([null]);
  });

  test("a decision refused by the daily quota counts nothing, and one that counted on it is refused (WB002)", async () => {
    // Two items either side of midnight: the first is refused by its day's quota, used up; the
    // second, on the next day, counted on the first's addition to a monthly counter.
    const a = await tenant();
    const midnight = new Date(Date.UTC(2029, 11, 15));
    await testQuery(db, "usage_set", [a.tenantId, "2029-12-14", 1000, 0]);
    const late = Object.assign(await item(a, { at: new Date(midnight.getTime() - 1) }), reading("month", 0, 1));
    const early = Object.assign(await item(a, { at: midnight }), reading("month", 1, 1));
    expect(refusals(await append([late, early]))).toEqual(["WQ001", "WB002"]);
    expect(await total(a, "month")).toBe("0");
  });
});

describe("receipt_append(json): errors", () => {
  test("a timestamp that iso_time() would not give back fails the whole call (22007); nothing stored", async () => {
    const a = await tenant();
    const good = await item(a);
    const bad = { ...(await item(a)), timestamp: good.timestamp.replace("Z", "+00:00") };
    const err = await append([good, bad]).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(DbError);
    expect((err as DbError).sqlstate).toBe("22007");
    expect(await db.one("receipts/head", [a.tenantId])).toEqual({ tenant_id: a.tenantId, tree_size: 0, head_hash: null, event_count: 0 });
  });

  test("an item that is not a protect or an execute fails the whole call (22023), naming its kind; nothing stored", async () => {
    const a = await tenant();
    for (const kind of ["event", null]) {
      // Not an Item on purpose: what a buggy caller might send.
      const odd = { ...(await item(a)), kind } as unknown as Item;
      const err = await append([await item(a), odd]).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(DbError);
      expect((err as DbError).sqlstate).toBe("22023");
      expect((err as DbError).message).toContain(`not ${kind ?? "NULL"}`);
    }
    expect(await db.one("receipts/head", [a.tenantId])).toEqual({ tenant_id: a.tenantId, tree_size: 0, head_hash: null, event_count: 0 });
  });

  test("receipt_append_tenant() (a cluster's one-tenant batches) appends as receipt_append() does, and refuses an item of another tenant (22023)", async () => {
    const [a, b] = [await tenant(), await tenant()];
    const rows = await db.query("receipts/append_tenant", [a.tenantId, [await item(a), await item(a)]]);
    expect(rows.map((r) => [r.idx, r.seq, r.refusal])).toEqual([[0, 0, null], [1, 1, null]]);
    const err = await db.query("receipts/append_tenant", [a.tenantId, [await item(a), await item(b)]]).then(() => undefined, (e: unknown) => e);
    expect((err as DbError).sqlstate).toBe("22023");
    expect(Number((await db.one("receipts/head", [a.tenantId]))!.tree_size)).toBe(2);
    expect(Number((await db.one("receipts/head", [b.tenantId]))!.tree_size)).toBe(0);
  });

  test("the link guard refuses every row written around receipt_append (WR005), even the exact next link", async () => {
    const a = await tenant();
    const [first] = await append([await item(a)]);
    const raw = async (seq: number, prev: string | null, chain?: string) => {
      const it = await item(a);
      const link = chain ?? (await chainHash({ ...it, prev, seq }));
      return { ...it, seq, prev_hash: prev, chain_hash: link };
    };
    const refused = async (rows: unknown[]) => {
      const err = await testQuery(db, "receipt_insert_raw", [rows]).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(DbError);
      return (err as DbError).sqlstate;
    };
    expect(await refused([await raw(5, first.chain_hash)])).toBe("WR005");
    expect(await refused([await raw(1, "0x" + "ab".repeat(32))])).toBe("WR005");
    expect(await refused([await raw(1, first.chain_hash, "0x" + "00".repeat(32))])).toBe("WR005");
    // Its head does not cover it: only the log's writers move a head past a row before inserting it.
    const next = await raw(1, first.chain_hash);
    expect(await refused([next])).toBe("WR005");
    // And receipt_append goes on from its own last row.
    const stored = await item(a);
    expect((await append([stored]))[0]).toMatchObject({ seq: 1, prev_hash: first.chain_hash });
    expect(await testOne(db, "receipt_delete", [stored.receipt_id]).then(() => "deleted", (e: DbError) => e.sqlstate)).toBe("WR001");
  });
});
