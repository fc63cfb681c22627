// receipt_append_batch(): many decisions in one call and one commit; one item's refusal leaves
// the others stored; each tenant's items keep their order.
import { describe, expect, test } from "bun:test";
import { newId } from "../../src/ids.ts";
import { canonicalJson } from "../../src/receipts/canonical.ts";
import { sha256HexSync } from "../../src/receipts/fast-crypto.ts";
import { chainHash } from "../../src/receipts/chain.ts";
import { batcherFor, claimLinks } from "../../src/receipts/batcher.ts";
import { chainHashSync } from "../../src/receipts/fast-crypto.ts";
import type { Db } from "../../src/db/index.ts";
import { DbError } from "../../src/db/index.ts";
import { call, signup, testService } from "../helpers/service.ts";
import { expectChainWalks } from "../helpers/chains.ts";

async function keyIdOf(user: { token: string }) {
  return (await call("GET", "/customer/keys", { headers: { authorization: `Bearer ${user.token}` } })).body.keys[0].key_id as string;
}

function item(tenantId: string, keyId: string, n: number, extra: Partial<{ kind: string; protect_receipt_id: string | null; decision: string; timestamp: string }> = {}) {
  const decision = extra.decision ?? "ALLOWED";
  const payload = canonicalJson({ v: 1, kind: extra.kind ?? "protect", input: { action: `batch.${n}` }, policy: { policy_id: "pol_default", version: 1, hash: "0x" + "0".repeat(64) }, decision, reasons: ["r"] });
  return {
    receipt_id: newId("rcpt_"),
    tenant_id: tenantId,
    key_id: keyId,
    kind: extra.kind ?? "protect",
    request_id: `batch-${n}`,
    timestamp: extra.timestamp ?? new Date(Date.UTC(2026, 0, 1, 0, 0, 0, n)).toISOString(),
    decision,
    payload,
    content_hash: sha256HexSync(payload),
    signature: "aaaa.bbbb.cccc",
    protect_receipt_id: extra.protect_receipt_id ?? null,
  };
}

type Linked = { idx: number; seq: number | null; prev_hash: string | null; chain_hash: string | null; error_sqlstate: string | null };

// Spies on the pipeline: what each call of the append queries was sent.
function spying(db: Db) {
  const sent: { name: string; params: unknown }[] = [];
  const spy = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "pipeline") {
        return {
          ...target.pipeline,
          query: (name: string, params: unknown[]) => {
            sent.push({ name, params: params[0] });
            return target.pipeline.query(name as never, params as never);
          },
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  return { spy, sent };
}

describe("receipt_append_batch", () => {
  test("interleaved tenants: every item answered at its index, per-tenant order kept, a refusal isolated", async () => {
    const { db } = await testService();
    const [a, b] = await Promise.all([signup(), signup()]);
    const [ka, kb] = await Promise.all([keyIdOf(a), keyIdOf(b)]);
    const items = [
      item(b.tenantId, kb, 1),
      item(a.tenantId, ka, 2),
      item(b.tenantId, kb, 3, { kind: "execute", protect_receipt_id: "rcpt_AAAAAAAAAAAAAAAAAAAAAA" }),
      item(a.tenantId, ka, 4),
      item(b.tenantId, kb, 5),
    ];
    const rows = await db.query<{ idx: number; seq: number | null; error_sqlstate: string | null; chain_hash: string | null }>("receipts/append_batch", [items]);
    const byIdx = Object.fromEntries(rows.map((r) => [r.idx, r]));
    expect(rows).toHaveLength(5);
    expect(byIdx[0]).toMatchObject({ seq: 0, error_sqlstate: null });
    expect(byIdx[2]).toMatchObject({ seq: null, error_sqlstate: "WR002" });
    expect(byIdx[4]).toMatchObject({ seq: 1, error_sqlstate: null });
    expect(byIdx[1]).toMatchObject({ seq: 0, error_sqlstate: null });
    expect(byIdx[3]).toMatchObject({ seq: 1, error_sqlstate: null });
    const listed = (await call("GET", "/customer/receipts", { headers: { authorization: `Bearer ${b.token}` } })).body.receipts;
    expect(listed.map((r: { request_id: string }) => r.request_id)).toEqual(["batch-5", "batch-1"]);
  });

  test("the batcher answers each caller with its own result or refusal", async () => {
    const { db } = await testService();
    const a = await signup();
    const ka = await keyIdOf(a);
    const results = await Promise.allSettled([
      batcherFor(db).submit(item(a.tenantId, ka, 10)),
      batcherFor(db).submit(item(a.tenantId, ka, 11, { kind: "execute", protect_receipt_id: "rcpt_BAAAAAAAAAAAAAAAAAAAAA" })),
      batcherFor(db).submit(item(a.tenantId, ka, 12)),
    ]);
    expect(results[1].status).toBe("rejected");
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(DbError);
    expect((results[1] as PromiseRejectedResult).reason.sqlstate).toBe("WR002");
    // Concurrent appends may go in separate batches that commit in either order: the two stored
    // ones take seq 0 and 1 between them, each with its own answer.
    const seqs = [results[0], results[2]].map((r) => (r as PromiseFulfilledResult<{ seq: number }>).value.seq);
    expect(seqs.sort()).toEqual([0, 1]);
  });

  test("the set path: executes and protects of several tenants across midnight, links and day counts exact", async () => {
    const { db } = await testService();
    const [a, b] = await Promise.all([signup(), signup()]);
    const [ka, kb] = await Promise.all([keyIdOf(a), keyIdOf(b)]);
    type Row = { idx: number; seq: number | null; prev_hash: string | null; chain_hash: string | null; quota_used: number | null; quota_limit: number | null; error_sqlstate: string | null };
    const run = async (items: ReturnType<typeof item>[]) => {
      const rows = await db.query<Row>("receipts/append_batch", [items]);
      return Object.fromEntries(rows.map((r) => [r.idx, r])) as Record<number, Row>;
    };
    const first = item(a.tenantId, ka, 1, { timestamp: "2026-03-01T23:59:59.990Z" });
    expect((await run([first]))[0]).toMatchObject({ seq: 0, quota_used: 1, error_sqlstate: null });

    const items = [
      item(a.tenantId, ka, 2, { timestamp: "2026-03-01T23:59:59.999Z" }),
      item(a.tenantId, ka, 3, { kind: "execute", protect_receipt_id: first.receipt_id, timestamp: "2026-03-02T00:00:00.001Z" }),
      item(b.tenantId, kb, 4, { timestamp: "2026-03-02T00:00:00.002Z" }),
      item(a.tenantId, ka, 5, { timestamp: "2026-03-02T00:00:00.003Z" }),
      item(a.tenantId, ka, 6, { timestamp: "2026-03-01T23:59:59.998Z" }),
    ];
    const r = await run(items);
    expect(Object.values(r).every((row) => row.error_sqlstate === null)).toBe(true);
    // a's items in arrival order.
    expect([r[0].seq, r[1].seq, r[3].seq, r[4].seq]).toEqual([1, 2, 3, 4]);
    expect(r[2].seq).toBe(0);
    // Day counts: a's protects on March 1 are its 2nd and 3rd that day, on March 2 its 1st; the
    // execute is March 2's first; free plan limits come back with them.
    expect([r[0].quota_used, r[4].quota_used, r[3].quota_used, r[1].quota_used, r[2].quota_used]).toEqual([2, 3, 1, 1, 1]);
    expect(r[0].quota_limit).toBe(1000);
    expect(r[1].quota_limit).toBe(100);
    // Every link is the hash of its predecessor's chain_hash and its own fields (contract section 4).
    const mine = [{ ...first, row: { seq: 0, prev_hash: null } }, ...[0, 1, 3, 4].map((i) => ({ ...items[i], row: r[i] }))];
    let prev: string | null = null;
    for (const m of mine) {
      expect(m.row.prev_hash).toBe(prev);
      const expected = await chainHash({ prev, content_hash: m.content_hash, request_id: m.request_id, timestamp: m.timestamp, seq: m.row.seq! });
      if (m.row !== mine[0].row) expect((m.row as Row).chain_hash).toBe(expected);
      prev = expected;
    }
    expect(await db.query("receipts/head", [a.tenantId])).toEqual([{ tenant_id: a.tenantId, tree_size: 5, head_hash: prev }]);
  });

  const store = async (db: Db, items: object[]) => {
    const rows = await db.query<Linked>("receipts/append_batch", [items]);
    return Object.fromEntries(rows.map((r) => [r.idx, r])) as Record<number, Linked>;
  };
  const headsOf = async (db: Db, ...tenants: string[]) =>
    new Map(
      await Promise.all(
        tenants.map(async (t) => {
          const [h] = await db.query<{ tree_size: number; head_hash: string | null }>("receipts/head", [t]);
          return [t, { size: h?.tree_size ?? 0, hash: h?.head_hash ?? null }] as const;
        }),
      ),
    );

  test("claimed links (migration 010): taken when they continue the heads, computed when stale or wrong, never stored wrong", async () => {
    const { db } = await testService();
    const [a, b] = await Promise.all([signup(), signup()]);
    const [ka, kb] = await Promise.all([keyIdOf(a), keyIdOf(b)]);
    // A tenant without a known head: nothing is claimed, the database computes the links.
    const unclaimed = [item(a.tenantId, ka, 1), item(b.tenantId, kb, 2)];
    expect(claimLinks(unclaimed, new Map([[a.tenantId, { size: 0, hash: null }]]))).toBe(unclaimed);

    // Claims from the true heads are exactly what is stored.
    const claimed = claimLinks([item(a.tenantId, ka, 3), item(b.tenantId, kb, 4), item(a.tenantId, ka, 5)], await headsOf(db, a.tenantId, b.tenantId)) as (ReturnType<typeof item> & { seq: number; prev_hash: string | null; chain_hash: string })[];
    expect(claimed.map((c) => c.seq)).toEqual([0, 0, 1]);
    expect(claimed[2].prev_hash).toBe(claimed[0].chain_hash);
    let r = await store(db, claimed);
    claimed.forEach((c, i) => expect(r[i]).toMatchObject({ seq: c.seq, prev_hash: c.prev_hash, chain_hash: c.chain_hash, error_sqlstate: null }));

    // Stale claims (another writer appended to a since they were made): the links continue the real head.
    const stale = claimLinks([item(a.tenantId, ka, 6)], await headsOf(db, a.tenantId));
    await store(db, [item(a.tenantId, ka, 7)]);
    r = await store(db, stale);
    const headA = (await headsOf(db, a.tenantId)).get(a.tenantId)!;
    expect(r[0]).toMatchObject({ seq: 3, chain_hash: headA.hash, error_sqlstate: null });
    expect(r[0].chain_hash).not.toBe((stale[0] as { chain_hash: string }).chain_hash);

    // Claims that continue the head but hash wrong: the statement trigger refuses them, the careful
    // path stores the right links; and a gap after a right first claim likewise.
    const heads = await headsOf(db, a.tenantId, b.tenantId);
    const wrong = claimLinks([item(b.tenantId, kb, 8), item(a.tenantId, ka, 9)], heads).map((c, i) => (i === 1 ? { ...c, chain_hash: "0x" + "00".repeat(32) } : c));
    r = await store(db, wrong);
    expect(r[1]).toMatchObject({ seq: 4, prev_hash: headA.hash, error_sqlstate: null });
    expect(r[1].chain_hash).toBe(chainHashSync({ prev: headA.hash, content_hash: wrong[1].content_hash, request_id: wrong[1].request_id, timestamp: wrong[1].timestamp, seq: 4 }));
    const gap = claimLinks([item(b.tenantId, kb, 10), item(b.tenantId, kb, 11)], await headsOf(db, b.tenantId)).map((c, i) => (i === 1 ? { ...c, seq: (c as { seq: number }).seq + 5 } : c));
    r = await store(db, gap);
    expect([r[0].seq, r[1].seq, r[1].prev_hash]).toEqual([2, 3, r[0].chain_hash]);
    // Every chain re-walks from seq 0 to its head.
    for (const t of [a.tenantId, b.tenantId]) {
      const head = (await headsOf(db, t)).get(t)!;
      expect(await expectChainWalks(db, t, head.size)).toBe(head.hash);
    }
  });


  test("a tenant whose storage a batch would overfill: the others' items and its own up to the limit are stored, the rest refused (WQ003)", async () => {
    const { db } = await testService();
    const [a, b] = await Promise.all([signup(), signup()]);
    const [ka, kb] = await Promise.all([keyIdOf(a), keyIdOf(b)]);
    // Free: 1,000 stored and 1,000 a day. 999 in one batch on January 1st, then a batch on the
    // 2nd (whose day counts start afresh) that would bring a to 1,001 stored.
    const filled = await store(db, Array.from({ length: 999 }, (_, n) => item(a.tenantId, ka, 100 + n)));
    expect(Object.values(filled).every((r) => r.error_sqlstate === null)).toBe(true);
    const next = (n: number) => ({ timestamp: new Date(Date.UTC(2026, 0, 2, 0, 0, 0, n)).toISOString() });
    const batch = [item(a.tenantId, ka, 2000, next(1)), item(b.tenantId, kb, 2001, next(2)), item(a.tenantId, ka, 2002, next(3))];
    const rows = await db.query<Linked & { quota_used: number | null }>("receipts/append_batch", [batch]);
    const r = Object.fromEntries(rows.map((row) => [row.idx, row]));
    expect(r[0]).toMatchObject({ seq: 999, quota_used: 1, error_sqlstate: null });
    expect(r[1]).toMatchObject({ seq: 0, quota_used: 1, error_sqlstate: null });
    expect(r[2]).toMatchObject({ seq: null, error_sqlstate: "WQ003" });
    await expectChainWalks(db, a.tenantId, 1000);
  }, 60_000);

  test("the batcher claims links from its last answer: its second batch needs no computing in the database", async () => {
    const { db } = await testService();
    const a = await signup();
    const ka = await keyIdOf(a);
    const { spy, sent } = spying(db);
    // Two at once: batches of two (a batch of one goes its own way, below).
    const pair = (n: number) => Promise.all([batcherFor(spy).submit(item(a.tenantId, ka, n)), batcherFor(spy).submit(item(a.tenantId, ka, n + 1))]);
    const first = await pair(20);
    const second = await pair(22);
    expect(sent.map((c) => c.name)).toEqual(["receipts/append_batch", "receipts/append_batch"]);
    const [one, two] = sent.map((c) => c.params as object[]);
    expect(one[0]).not.toHaveProperty("chain_hash");
    expect(two[0]).toMatchObject({ seq: 2, prev_hash: first[1].chain_hash, chain_hash: second[0].chain_hash });
    expect(second[0]).toMatchObject({ seq: 2, prev_hash: first[1].chain_hash });
  });

  test("a batch of one goes through receipt_append_item(): same links and refusals, and the next batch claims from its answer", async () => {
    const { db } = await testService();
    const a = await signup();
    const ka = await keyIdOf(a);
    const { spy, sent } = spying(db);
    const lone = await batcherFor(spy).submit(item(a.tenantId, ka, 30));
    expect(lone).toMatchObject({ seq: 0, prev_hash: null });
    // A refusal raised by the database is that item's answer, as from a batch's careful path.
    const refused = await batcherFor(spy).submit(item(a.tenantId, ka, 31, { kind: "execute", protect_receipt_id: "rcpt_CAAAAAAAAAAAAAAAAAAAAA" })).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(DbError);
    expect((refused as DbError).sqlstate).toBe("WR002");
    const again = await batcherFor(spy).submit(item(a.tenantId, ka, 32));
    expect(again).toMatchObject({ seq: 1, prev_hash: lone.chain_hash });
    const pair = await Promise.all([batcherFor(spy).submit(item(a.tenantId, ka, 33)), batcherFor(spy).submit(item(a.tenantId, ka, 34))]);
    expect(sent.map((c) => c.name)).toEqual(["receipts/append_one", "receipts/append_one", "receipts/append_one", "receipts/append_batch"]);
    // The pair was sent with claims that continue the lone appends' answers.
    expect((sent[3].params as object[])[0]).toMatchObject({ seq: 2, prev_hash: again.chain_hash, chain_hash: pair[0].chain_hash });
    expect(pair.map((r) => r.seq)).toEqual([2, 3]);
    await expectChainWalks(db, a.tenantId, 4);
  });
});

// Items decided under a hint carry their tenant's key_context_epoch (migration 012): a stale one is
// refused with WR006 and not stored, and it costs the items around it nothing but their claims.
describe("keyed appends (receipt_append_batch_keyed, receipt_append_item_keyed)", () => {
  const epochOf = async (db: Db, tenantId: string) => Number((await db.one<{ key_context_epoch: number }>("test/tenant_key_epoch", [tenantId]))!.key_context_epoch);

  test("a stale item is answered WR006 at its index and not stored; fresh and unkeyed items are stored, their chains walk", async () => {
    const { db } = await testService();
    const [a, b] = await Promise.all([signup(), signup()]);
    const [ka, kb] = await Promise.all([keyIdOf(a), keyIdOf(b)]);
    const [ea, eb] = await Promise.all([epochOf(db, a.tenantId), epochOf(db, b.tenantId)]);
    const items = [
      { ...item(a.tenantId, ka, 40), key_epoch: ea },
      { ...item(b.tenantId, kb, 41), key_epoch: eb + 1 },
      item(b.tenantId, kb, 42),
      { ...item(a.tenantId, ka, 43), key_epoch: ea },
      { ...item(b.tenantId, kb, 44), key_epoch: eb },
    ];
    const rows = await db.query<Linked>("receipts/append_batch_keyed", [items]);
    const r = Object.fromEntries(rows.map((row) => [row.idx, row]));
    expect(rows).toHaveLength(5);
    expect(r[1]).toMatchObject({ seq: null, error_sqlstate: "WR006" });
    expect([r[0], r[3]].map((x) => [x.seq, x.error_sqlstate])).toEqual([[0, null], [1, null]]);
    expect([r[2], r[4]].map((x) => [x.seq, x.error_sqlstate])).toEqual([[0, null], [1, null]]);
    await expectChainWalks(db, a.tenantId, 2);
    await expectChainWalks(db, b.tenantId, 2);
    // Every item fresh: the same answers as receipt_append_batch().
    const fresh = await db.query<Linked>("receipts/append_batch_keyed", [[{ ...item(b.tenantId, kb, 45), key_epoch: eb }]]);
    expect(fresh).toEqual([expect.objectContaining({ idx: 0, seq: 2, error_sqlstate: null })]);
  });

  test("a revoke between the hint and the append: the item is refused, nothing stored, nothing counted", async () => {
    const { db } = await testService();
    const a = await signup();
    const ka = await keyIdOf(a);
    const epoch = await epochOf(db, a.tenantId);
    expect((await call("POST", `/customer/keys/${ka}/revoke`, { headers: { authorization: `Bearer ${a.token}` } })).status).toBe(200);
    const single = await db.query("receipts/append_one_keyed", [{ ...item(a.tenantId, ka, 50), key_epoch: epoch }]).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(single).toBeInstanceOf(DbError);
    expect((single as DbError).sqlstate).toBe("WR006");
    const rows = await db.query<Linked>("receipts/append_batch_keyed", [[51, 52].map((n) => ({ ...item(a.tenantId, ka, n), key_epoch: epoch }))]);
    expect(rows.map((row) => [row.idx, row.seq, row.error_sqlstate])).toEqual([
      [0, null, "WR006"],
      [1, null, "WR006"],
    ]);
    await expectChainWalks(db, a.tenantId, 0);
    const usage = (await call("GET", "/customer/dashboard", { headers: { authorization: `Bearer ${a.token}` } })).body.usage;
    expect(usage).toMatchObject({ protect_today: 0, receipts_stored: 0 });
  });

  test("the batcher sends keyed items through the keyed functions; a stale item between claimed ones leaves the chain whole", async () => {
    const { db } = await testService();
    const a = await signup();
    const ka = await keyIdOf(a);
    const epoch = await epochOf(db, a.tenantId);
    const { spy, sent } = spying(db);
    const keyed = (n: number, key_epoch = epoch) => batcherFor(spy).submit({ ...item(a.tenantId, ka, n), key_epoch });
    expect(await keyed(60)).toMatchObject({ seq: 0 });
    await Promise.all([keyed(61), keyed(62)]);
    // The next batch is sent with claims; its middle item is stale, so the last one's claim skips a seq.
    const settled = await Promise.allSettled([keyed(63), keyed(64, epoch + 1), keyed(65)]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(((settled[1] as PromiseRejectedResult).reason as DbError).sqlstate).toBe("WR006");
    expect(settled.filter((s) => s.status === "fulfilled").map((s) => (s as PromiseFulfilledResult<{ seq: number }>).value.seq)).toEqual([3, 4]);
    expect(sent.map((c) => c.name)).toEqual(["receipts/append_one_keyed", "receipts/append_batch_keyed", "receipts/append_batch_keyed"]);
    await expectChainWalks(db, a.tenantId, 5);
  });
});
