// receipt_append_batch(): many decisions in one call and one commit; one item's refusal leaves
// the others stored; each tenant's items keep their order.
import { describe, expect, test } from "bun:test";
import { newId } from "../../src/ids.ts";
import { canonicalJson } from "../../src/receipts/canonical.ts";
import { sha256HexSync } from "../../src/receipts/fast-crypto.ts";
import { batcherFor } from "../../src/receipts/batcher.ts";
import { DbError } from "../../src/db/index.ts";
import { call, signup, testService } from "../helpers/service.ts";

async function keyIdOf(user: { token: string }) {
  return (await call("GET", "/customer/keys", { headers: { authorization: `Bearer ${user.token}` } })).body.keys[0].key_id as string;
}

function item(tenantId: string, keyId: string, n: number, extra: Partial<{ kind: string; protect_receipt_id: string | null; decision: string }> = {}) {
  const decision = extra.decision ?? "ALLOWED";
  const payload = canonicalJson({ v: 1, kind: extra.kind ?? "protect", input: { action: `batch.${n}` }, policy: { policy_id: "pol_default", version: 1, hash: "0x" + "0".repeat(64) }, decision, reasons: ["r"] });
  return {
    receipt_id: newId("rcpt_"),
    tenant_id: tenantId,
    key_id: keyId,
    kind: extra.kind ?? "protect",
    request_id: `batch-${n}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, n)).toISOString(),
    decision,
    payload,
    content_hash: sha256HexSync(payload),
    signature: "aaaa.bbbb.cccc",
    protect_receipt_id: extra.protect_receipt_id ?? null,
  };
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
});
