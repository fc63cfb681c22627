// The stored Merkle tree (receipt_tree_nodes): grown by the log's writer as it appends, exactly
// the complete subtrees of 16 leaves or more of each tenant's log as RFC 9162 defines them, and
// never written otherwise; smaller subtrees are folded from the receipts on read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DbError, type Db } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { newId } from "../../src/ids.ts";
import { bytesToHex, canonicalJson, sha256Hex } from "../../src/crypto/canonical.ts";
import { chainHash, receiptLeaf } from "../../src/receipts/chain.ts";
import { checkReceiptLog } from "../../src/receipts/check.ts";
import { consistencyProof, inclusionProof, rootHash } from "../../src/receipts/merkle.ts";
import { receiptProof, logConsistency } from "../../src/receipts/checkpoint.ts";
import { rangeRoots } from "../../src/receipts/tree.ts";
import { buildPayload } from "../../src/decide/payload.ts";
import { openTestDb } from "../helpers/service.ts";
import { isCitus, sqlTenant, testQuery } from "../helpers/sql.ts";

const POLICY = { policy_id: "pol_default", version: 1, hash: "0x" + "ab".repeat(32) };
let db: Db;

beforeAll(async () => {
  db = await openTestDb();
  await migrate(db);
}, 60_000);
afterAll(async () => {
  await db?.close();
});

const tenant = () => sqlTenant(db, "tree");

type Tenant = Awaited<ReturnType<typeof tenant>>;

/** One receipt_append() call (one INSERT statement) of the given tenants' protects, in order. */
async function appendBatch(tenants: Tenant[]): Promise<{ tenantId: string; chain_hash: string }[]> {
  const items = await Promise.all(tenants.map(async (t) => {
    const text = canonicalJson(buildPayload({ kind: "protect", input: { action: "document.read", resource: "x" }, policy: POLICY, decision: "ALLOWED", reasons: ["r"], rule: null }));
    return {
      receipt_id: newId("rcpt_"), tenant_id: t.tenantId, key_id: t.keyId, kind: "protect", request_id: newId("req_"), timestamp: new Date().toISOString(),
      decision: "ALLOWED", payload: text, content_hash: await sha256Hex(text), signature: "aaa.bbb.ccc", protect_receipt_id: null,
    };
  }));
  const rows = await db.query("receipts/append", [items]);
  for (const r of rows) if (r.refusal) throw new Error(`refused: ${r.refusal}`);
  return rows.map((r, i) => ({ tenantId: tenants[i].tenantId, chain_hash: r.chain_hash! }));
}

/** Every complete subtree (level, idx) of 16 leaves or more of a log of these chain hashes, with its RFC 9162 root. */
function expectedNodes(chainHashes: string[]) {
  const leaves = chainHashes.map(receiptLeaf);
  const out: { level: number; idx: number; hash: string }[] = [];
  for (let level = 4, size = 16; size <= leaves.length; level++, size *= 2) {
    for (let idx = 0; (idx + 1) * size <= leaves.length; idx++) out.push({ level, idx, hash: bytesToHex(rootHash(leaves.slice(idx * size, (idx + 1) * size))).slice(2) });
  }
  return out;
}

describe("receipt_tree_nodes", () => {
  test("holds exactly every complete subtree of each tenant's log, across batches that interleave tenants", async () => {
    const a = await tenant();
    const b = await tenant();
    const chains = new Map<string, string[]>([[a.tenantId, []], [b.tenantId, []]]);
    // Batch sizes that cross and land on multiples of 16 and powers of two, with both tenants in one statement.
    for (const size of [1, 2, 5, 8, 1, 16, 3, 31, 24, 48, 1, 100]) {
      const batch = Array.from({ length: size }, (_, i) => (i % 3 === 2 ? b : a));
      for (const row of await appendBatch(batch)) chains.get(row.tenantId)!.push(row.chain_hash);
      for (const [tenantId, hashes] of chains) {
        expect(await testQuery(db, "receipt_tree_nodes", [tenantId])).toEqual(expectedNodes(hashes));
      }
    }
    expect(chains.get(a.tenantId)!.length).toBeGreaterThan(128);
  }, 60_000);

  test("every range root, inclusion and consistency path read from the tree equals RFC 9162's over the chain", async () => {
    const t = await tenant();
    const chain: string[] = [];
    for (const size of [7, 9, 1, 20, 33, 30]) for (const row of await appendBatch(Array.from({ length: size }, () => t))) chain.push(row.chain_hash);
    const leaves = chain.map(receiptLeaf);
    const hex = (hashes: Uint8Array[]) => hashes.map(bytesToHex);
    const ranges: [number, number][] = [];
    for (let to = 1; to <= leaves.length; to++) ranges.push([0, to]);
    const roots = ranges.map(([, to]) => bytesToHex(rootHash(leaves.slice(0, to))));
    expect(hex(await rangeRoots(db, t.tenantId, ranges))).toEqual(roots);
    // The tree head's root in SQL (receipt_tree_root(), what a checkpoint reads), at every size; NULL beyond the log.
    const heads = await testQuery<{ size: number; root: string | null }>(db, "receipt_tree_roots", [t.tenantId, leaves.length + 1]);
    expect(heads.map((h) => h.root)).toEqual([bytesToHex(rootHash([])), ...roots, null]);
    for (const size of [1, 15, 16, 17, 31, 32, 64, 99, leaves.length]) {
      for (const m of [0, 1, 14, 15, 16, 31, 47, size - 1].filter((m) => m < size)) {
        const proof = await receiptProof(db, t.tenantId, { receipt_id: "rcpt_x", seq: m, chain_hash: chain[m], tree_size: leaves.length }, size);
        expect(proof.path).toEqual(hex(inclusionProof(leaves, m, size)));
        if (m > 0) expect((await logConsistency(db, t.tenantId, m, size)).path).toEqual(hex(consistencyProof(leaves, m, size)));
      }
    }
  }, 60_000);

  test("the database refuses a node written, changed or removed other than by an append (WR001)", async () => {
    const t = await tenant();
    for (let i = 0; i < 32; i++) await appendBatch([t]);
    const before = await testQuery(db, "receipt_tree_nodes", [t.tenantId]);
    expect(before).toHaveLength(3);
    const refused = async (name: string, params: unknown[]) => {
      const outcome = await testQuery(db, name, params).then(() => undefined, (err: unknown) => err);
      expect(outcome).toBeInstanceOf(DbError);
      expect((outcome as DbError).sqlstate).toBe("WR001");
    };
    // A node ahead of the log would otherwise sit in the way of (or forge) a later subtree.
    await refused("receipt_tree_insert", [t.tenantId, 4, 2]);
    await refused("receipt_tree_update", [t.tenantId]);
    await refused("receipt_tree_delete", [t.tenantId]);
    await refused("receipt_tree_grow", [t.tenantId, 32, 64]);
    expect(await testQuery(db, "receipt_tree_nodes", [t.tenantId])).toEqual(before);
  });

  test("a head moved past a complete subtree without its stored node is refused at commit (WR001)", async () => {
    const t = await tenant();
    let last = "";
    for (let i = 0; i < 15; i++) last = (await appendBatch([t]))[0].chain_hash;
    // The 16th receipt written by hand as the writer writes it (the head moved first, then the exact
    // next link), but without growing the tree: the level-4 node it completes is missing.
    const text = canonicalJson(buildPayload({ kind: "protect", input: { action: "by_hand" }, policy: POLICY, decision: "DENIED", reasons: ["n"], rule: "n" }));
    const row = { receipt_id: newId("rcpt_"), tenant_id: t.tenantId, key_id: t.keyId, kind: "protect" as const, request_id: "req_hand", timestamp: "2025-01-01T00:00:00.000Z", decision: "DENIED", payload: text, content_hash: await sha256Hex(text), protect_receipt_id: null, seq: 15, prev_hash: last };
    const chain_hash = await chainHash({ ...row, prev: last, seq: 15 });
    const outcome = await testQuery(db, "receipt_insert_with_head", [[{ ...row, chain_hash }], 16, chain_hash]).then(() => undefined, (err: unknown) => err);
    expect(outcome).toBeInstanceOf(DbError);
    expect((outcome as DbError).sqlstate).toBe("WR001");
    expect(await db.query("receipts/head", [t.tenantId])).toEqual([{ tenant_id: t.tenantId, tree_size: 15, head_hash: last, event_count: 0 }]);
    // The writer completes it, node and all.
    await appendBatch([t]);
    expect(await testQuery(db, "receipt_tree_nodes", [t.tenantId])).toHaveLength(1);
  });

  test("ops receipts check reports a stored tree that is not the chain's", async () => {
    const t = await tenant();
    await appendBatch(Array.from({ length: 19 }, () => t));
    const storedProblem = (problems: { problem: string }[]) => problems.some((p) => p.problem.startsWith("the stored Merkle tree's root"));
    expect(storedProblem((await checkReceiptLog(db, t.tenantId))!.problems)).toBe(false);
    // Citus keeps a copy of the guard on each shard, which ALTER TABLE on the coordinator does not reach.
    const citus = (await isCitus(db)) ? "citus_" : "";
    await testQuery(db, `${citus}receipt_tree_guard_off`);
    try {
      await testQuery(db, "receipt_tree_update", [t.tenantId]);
    } finally {
      await testQuery(db, `${citus}receipt_tree_guard_on`);
    }
    expect(storedProblem((await checkReceiptLog(db, t.tenantId))!.problems)).toBe(true);
  });
});
