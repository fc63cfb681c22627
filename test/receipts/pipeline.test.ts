// Receipt batches in flight one behind the other: Db.pipeline keeps them on one server session in
// the order sent, and the batcher's memo of the heads lets a batch claim its links while the one
// before it is still in the database (src/receipts/batcher.ts). The database checks every link
// whatever is claimed; these tests check that the claims are the right ones, so that the database
// does not have to compute them.
import { describe, expect, test } from "bun:test";
import { newId } from "../../src/ids.ts";
import { canonicalJson } from "../../src/receipts/canonical.ts";
import { chainHashSync, sha256HexSync } from "../../src/receipts/fast-crypto.ts";
import { HeadsMemo, batcherFor, type AppendItem, type AppendResult, type ClaimedItem } from "../../src/receipts/batcher.ts";
import type { Db } from "../../src/db/index.ts";
import { call, signup, testService } from "../helpers/service.ts";
import { expectChainWalks } from "../helpers/chains.ts";

let n = 0;
function item(tenantId: string, keyId = "key_x"): AppendItem {
  n++;
  const payload = canonicalJson({ v: 1, kind: "protect", input: { action: `pipeline.${n}` }, policy: { policy_id: "pol_default", version: 1, hash: "0x" + "0".repeat(64) }, decision: "ALLOWED", reasons: ["r"] });
  return {
    receipt_id: newId("rcpt_"), tenant_id: tenantId, key_id: keyId, kind: "protect", request_id: `pipeline-${n}`,
    timestamp: new Date(Date.UTC(2026, 0, 2, 0, 0, 0, n % 1000)).toISOString(), decision: "ALLOWED", payload,
    content_hash: sha256HexSync(payload), signature: "aaaa.bbbb.cccc", protect_receipt_id: null,
  };
}

/** What the database would store for items sent as they were: the next seqs of the given heads. */
function store(items: AppendItem[], heads: Map<string, { size: number; hash: string | null }>): AppendResult[] {
  return items.map((it) => {
    const head = heads.get(it.tenant_id) ?? { size: 0, hash: null };
    const chain_hash = chainHashSync({ prev: head.hash, content_hash: it.content_hash, request_id: it.request_id, timestamp: it.timestamp, seq: head.size });
    heads.set(it.tenant_id, { size: head.size + 1, hash: chain_hash });
    return { seq: head.size, prev_hash: head.hash, chain_hash, quota_limit: null, quota_used: 1 };
  });
}

describe("HeadsMemo", () => {
  test("claims continue the batch still in flight; a matching answer changes nothing", () => {
    const memo = new HeadsMemo();
    const db = new Map<string, { size: number; hash: string | null }>();
    const first = memo.send([item("A"), item("B")]);
    expect(first.claimed).toBe(false); // nothing known yet
    memo.answered(first.batch, first.items, first.claimed, store(first.items, db));
    expect(memo.get("A")).toEqual(db.get("A"));

    const second = memo.send([item("A"), item("A")]);
    const third = memo.send([item("A"), item("B")]); // sent before the second is answered
    expect(second.claimed && third.claimed).toBe(true);
    expect((third.items[0] as ClaimedItem).seq).toBe(3);
    expect((third.items[0] as ClaimedItem).prev_hash).toBe((second.items[1] as ClaimedItem).chain_hash);
    const stored2 = store(second.items, db);
    const stored3 = store(third.items, db);
    // The database, running them in order, stores exactly what was claimed.
    (third.items as ClaimedItem[]).forEach((c, i) => expect(stored3[i]).toMatchObject({ seq: c.seq, chain_hash: c.chain_hash }));
    memo.answered(second.batch, second.items, second.claimed, stored2);
    memo.answered(third.batch, third.items, third.claimed, stored3);
    expect(memo.get("A")).toEqual(db.get("A"));
    expect(memo.get("B")).toEqual(db.get("B"));
  });

  test("an answer that is not what was claimed: the heads come from what was stored, or are forgotten while a later batch is out", () => {
    const memo = new HeadsMemo();
    const db = new Map<string, { size: number; hash: string | null }>();
    const first = memo.send([item("A"), item("B")]);
    memo.answered(first.batch, first.items, first.claimed, store(first.items, db));

    // Another instance appends to A: the claims of the next two batches are stale.
    store([item("A")], db);
    const second = memo.send([item("A"), item("B")]);
    const third = memo.send([item("A")]);
    const stored2 = store(second.items.map(({ seq, prev_hash, chain_hash, ...rest }: any) => rest), db);
    memo.answered(second.batch, second.items, second.claimed, stored2);
    expect(memo.get("A")).toBeUndefined(); // the third batch is out for A: its answer will say
    expect(memo.get("B")).toEqual(db.get("B")); // B was stored as claimed
    const stored3 = store(third.items.map(({ seq, prev_hash, chain_hash, ...rest }: any) => rest), db);
    memo.answered(third.batch, third.items, third.claimed, stored3);
    expect(memo.get("A")).toEqual(db.get("A"));

    // A refusal: the head is the last stored item of that tenant; none stored, forgotten.
    const fourth = memo.send([item("A"), item("A"), item("B")]);
    const stored4: (AppendResult | Error)[] = store(fourth.items.slice(0, 1).map(({ seq, prev_hash, chain_hash, ...rest }: any) => rest), db);
    stored4.push(new Error("quota"), new Error("quota"));
    memo.answered(fourth.batch, fourth.items, fourth.claimed, stored4);
    expect(memo.get("A")).toEqual(db.get("A"));
    expect(memo.get("B")).toBeUndefined();

    // A batch whose outcome is unknown: nothing is known any more.
    memo.send([item("A")]);
    memo.lost();
    expect(memo.get("A")).toBeUndefined();
  });

  test("a batch sent without claims forgets its tenants until it is answered", () => {
    const memo = new HeadsMemo();
    const db = new Map<string, { size: number; hash: string | null }>();
    const first = memo.send([item("A")]);
    memo.answered(first.batch, first.items, first.claimed, store(first.items, db));
    const second = memo.send([item("A"), item("C")]); // C unknown: no claims at all
    expect(second.claimed).toBe(false);
    expect(memo.get("A")).toBeUndefined();
    const third = memo.send([item("A")]);
    expect(third.claimed).toBe(false);
    memo.answered(second.batch, second.items, second.claimed, store(second.items, db));
    expect(memo.get("A")).toBeUndefined(); // the third is still out for A
    expect(memo.get("C")).toEqual(db.get("C"));
    memo.answered(third.batch, third.items, third.claimed, store(third.items, db));
    expect(memo.get("A")).toEqual(db.get("A"));
  });
});

describe("Db.pipeline", () => {
  test("statements sent together run on one server session", async () => {
    const { db } = await testService();
    if (db.kind !== "postgres") return; // PGlite has one session
    const pids = await Promise.all(Array.from({ length: 6 }, () => db.pipeline.one<{ pid: number }>("test/backend_pid")));
    expect(new Set(pids.map((p) => p!.pid)).size).toBe(1);
  });

  test("batches in flight one behind the other are stored as claimed, and every chain re-walks", async () => {
    const { db } = await testService();
    const users = await Promise.all([signup(), signup(), signup()]);
    const tenants = await Promise.all(
      users.map(async (u) => ({ id: u.tenantId, key: (await call("GET", "/customer/keys", { headers: { authorization: `Bearer ${u.token}` } })).body.keys[0].key_id as string })),
    );
    const sent: { items: (AppendItem & { seq?: number; chain_hash?: string })[]; inFlight: number }[] = [];
    let inFlight = 0;
    const spy = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop !== "pipeline") return Reflect.get(target, prop, receiver);
        return {
          ...target.pipeline,
          query: async (name: string, params: unknown[]) => {
            sent.push({ items: params[0] as AppendItem[], inFlight: ++inFlight });
            try {
              return await target.pipeline.query(name as never, params as never);
            } finally {
              inFlight--;
            }
          },
        };
      },
    }) as Db;
    const batcher = batcherFor(spy);
    // One batch first, so the batcher knows every head; then waves of appends a turn of the event
    // loop apart, so that a batch goes out while the one before it is still in the database.
    await Promise.all(tenants.map((t) => batcher.submit(item(t.id, t.key))));
    sent.length = 0;
    const submitted: AppendItem[] = [];
    const results: Promise<AppendResult>[] = [];
    for (let wave = 0; wave < 11; wave++) {
      for (const t of tenants) {
        const it = item(t.id, t.key);
        submitted.push(it);
        results.push(batcher.submit(it));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const stored = await Promise.all(results);
    // Off this thread (PostgreSQL, PGlite's thread) the next batch goes while one is in the database.
    if (db.offThread) expect(sent.some((s) => s.inFlight === 2)).toBe(true);
    // Every batch claimed its links, and each item was stored exactly as claimed.
    expect(sent.length).toBeGreaterThan(1);
    for (const s of sent) {
      for (const it of s.items) {
        expect(it.chain_hash).toBeDefined();
        const r = stored[submitted.findIndex((x) => x.receipt_id === it.receipt_id)];
        expect([r.seq, r.chain_hash]).toEqual([it.seq!, it.chain_hash!]);
      }
    }
    // Every tenant's chain: seqs 0..11, each linking to the one before.
    for (const t of tenants) await expectChainWalks(db, t.id, 12);
  });
});
