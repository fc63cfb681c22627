// The database rules of keys, policies, the receipt chain and idempotency, called through named queries as the app calls them: key
// rotation and the key state machine, immutable policy versions, the append-only receipt chain,
// quotas and idempotency records. Rolled back where the check allows it.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DbError, type Db, type Queryable } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { newId } from "../../src/ids.ts";
import { idempotencyKeyHash } from "../../src/http/idempotency.ts";
import { hashSecret, newSecret, secretHint } from "../../src/keys/secret.ts";
import { canonicalJson, sha256Hex } from "../../src/crypto/canonical.ts";
import { chainHash } from "../../src/receipts/chain.ts";
import { buildPayload } from "../../src/decide/payload.ts";
import { openTestDb } from "../helpers/service.ts";
import { isCitus, refusedConstraint, rolledBackIn, sqlTenant, testQuery } from "../helpers/sql.ts";

const POLICY = { policy_id: "pol_default", version: 1, hash: "0x" + "ab".repeat(32) };

let db: Db;

beforeAll(async () => {
  db = await openTestDb();
  await migrate(db);
}, 60_000);
afterAll(async () => {
  await db?.close();
});

const rolledBack = (fn: (q: Queryable) => Promise<void>) => rolledBackIn(db, fn);

/** Runs fn on the database itself, committed: for tests that use test SQL (fresh tenants of their own). */
async function committed(fn: (q: Db) => Promise<void>): Promise<void> {
  await fn(db);
}

async function failure(promise: Promise<unknown>): Promise<DbError> {
  const outcome = await promise.then((value) => ({ value }), (err: unknown) => ({ err }));
  if (!("err" in outcome)) throw new Error(`expected a database error, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.err).toBeInstanceOf(DbError);
  return outcome.err as DbError;
}

const tenant = (q: Queryable = db) => sqlTenant(q, "sql4");

type Appended = { seq: number; prev_hash: string | null; chain_hash: string; quota_limit: number | null; quota_used: number };

async function append(
  q: Queryable,
  t: { tenantId: string; keyId: string },
  opts: { decision?: "ALLOWED" | "DENIED"; kind?: "protect" | "execute"; protectId?: string; at?: Date; requestId?: string; receiptId?: string } = {},
) {
  const decision = opts.decision ?? "ALLOWED";
  const payload = buildPayload({ kind: opts.kind ?? "protect", input: { action: "document.read", resource: "x" }, policy: POLICY, decision, reasons: ["r"], rule: null });
  const text = canonicalJson(payload);
  const receiptId = opts.receiptId ?? newId("rcpt_");
  const timestamp = (opts.at ?? new Date()).toISOString();
  const requestId = opts.requestId ?? newId("req_");
  const [row] = await q.query("receipts/append", [[{
    receipt_id: receiptId, tenant_id: t.tenantId, key_id: t.keyId, kind: opts.kind ?? "protect", request_id: requestId, timestamp, decision,
    payload: text, content_hash: await sha256Hex(text), signature: "aaa.bbb.ccc", protect_receipt_id: opts.protectId ?? null,
  }]]);
  if (row.refusal) throw new DbError(row.refusal, undefined, `refused: ${row.refusal}`, "receipts/append");
  return { ...row, receiptId, timestamp, requestId, contentHash: await sha256Hex(text), text };
}

describe("api_key_rotate and api_keys_guard", () => {
  test("rotation revokes the old key (replaced_by the new one) and issues the new one with the same label", async () => {
    await committed(async (q) => {
      const t = await tenant(q);
      const newKey = newId("key_");
      const secret = newSecret();
      const [row] = await q.query("keys/rotate", [t.tenantId, t.keyId, newKey, await hashSecret(secret), secretHint(secret), null, 0]);
      expect(row).toMatchObject({ revoked_key_id: t.keyId, key_id: newKey, tenant_id: t.tenantId, label: "default", status: "active" });
      const keys = await testQuery<Record<string, string | null>>(q, "tenant_keys", [t.tenantId]);
      expect(keys.find((k) => k.key_id === t.keyId)).toMatchObject({ status: "revoked" });
      expect(keys.find((k) => k.key_id === newKey)).toMatchObject({ status: "active", label: "default" });
      // A second rotation of the same (now revoked) key is refused.
      const again = await failure(q.query("keys/rotate", [t.tenantId, t.keyId, newId("key_"), await hashSecret(newSecret()), "abcd", null, 0]));
      expect(again.sqlstate).toBe("WK001");
    });
  });

  test("another tenant's or an unknown key rotates nothing", async () => {
    await rolledBack(async (q) => {
      const owner = await tenant(q);
      const other = await tenant(q);
      expect(await q.query("keys/rotate", [other.tenantId, owner.keyId, newId("key_"), await hashSecret(newSecret()), "abcd", null, 0])).toEqual([]);
      expect(await q.query("keys/rotate", [owner.tenantId, newId("key_"), newId("key_"), await hashSecret(newSecret()), "abcd", null, 0])).toEqual([]);
    });
  });

  test("the database refuses revoked -> active, and any change of a revoked key (WK001)", async () => {
    await committed(async (q) => {
      const t = await tenant(q);
      await q.query("keys/revoke", [t.tenantId, t.keyId, null]);
      const err = await failure(testQuery(q, "key_set_status", [t.keyId, "active"]));
      expect(err.sqlstate).toBe("WK001");
    });
  });

  test("an active key may be revoked directly; revoked_at follows the status", async () => {
    await committed(async (q) => {
      const t = await tenant(q);
      expect((await testQuery<{ status: string }>(q, "key_set_status", [t.keyId, "revoked"]))[0].status).toBe("revoked");
    });
  });
});

describe("policies", () => {
  test("policy_publish numbers versions 2, 3, ... per tenant; versions are immutable (WP001)", async () => {
    const t = await tenant();
    const other = await tenant();
    const doc = canonicalJson({ default_effect: "allow", default_reason: "ok", rules: [] });
    const hash = await sha256Hex(doc);
    const [v2] = await db.query("policies/publish", [t.tenantId, doc, hash, null, null]);
    const [v3] = await db.query("policies/publish", [t.tenantId, doc, hash, null, null]);
    const [o2] = await db.query("policies/publish", [other.tenantId, doc, hash, null, null]);
    expect(v2).toMatchObject({ policy_id: "pol_" + t.tenantId.slice(5), version: 2, hash });
    expect(v3.version).toBe(3);
    expect(o2.version).toBe(2);
    expect((await failure(testQuery(db, "policy_update", [t.tenantId, 2]))).sqlstate).toBe("WP001");
    expect((await failure(testQuery(db, "policy_delete", [t.tenantId, 2]))).sqlstate).toBe("WP001");
    expect((await db.query("policies/active", [t.tenantId]))[0].version).toBe(3);
  });

  test("a hash that does not match the document is refused", async () => {
    const t = await tenant();
    const err = await failure(db.query("policies/publish", [t.tenantId, '{"a":1}', "0x" + "00".repeat(32), null, null]));
    expect(err.sqlstate).toBe("23514");
    expect(refusedConstraint(err)).toBe("policies_hash_matches_document");
  });
});

describe("receipt chain", () => {
  test("appends get seq 0, 1, 2 with chain_hash as docs/api.md defines it", async () => {
    await rolledBack(async (q) => {
      const t = await tenant(q);
      let prev: string | null = null;
      for (let i = 0; i < 3; i++) {
        const r = await append(q, t, { requestId: i === 1 ? 'we"ird\\id/1' : undefined });
        expect(r.seq).toBe(i);
        expect(r.prev_hash).toBe(prev);
        const claims = { receipt_id: r.receiptId, tenant_id: t.tenantId, key_id: t.keyId, kind: "protect" as const, request_id: r.requestId, timestamp: r.timestamp, content_hash: r.contentHash, protect_receipt_id: null };
        expect(r.chain_hash).toBe(await chainHash({ ...claims, prev, seq: i }));
        prev = r.chain_hash;
      }
      expect(await q.query("receipts/head", [t.tenantId])).toEqual([{ tenant_id: t.tenantId, tree_size: 3, head_hash: prev, event_count: 0 }]);
    });
  });

  test("receipt_chain_hash in SQL equals the TypeScript chain hash for awkward request ids and every claim", async () => {
    // Request ids are visible ASCII (the receipts CHECK): every one of them, `"` and `\` above all, must escape alike.
    const visible = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join("");
    const requestIds = ['a"b', "back\\slash", '\\"', "/slash/", "~!@#$%^&*()_+{}|:<>?`-=[];',.", visible, "x".repeat(128)];
    const base = {
      receipt_id: "rcpt_" + "A".repeat(22),
      tenant_id: "cust_" + "b".repeat(22),
      key_id: "key_" + "c".repeat(22) as string | null,
      kind: "protect" as "protect" | "execute" | "simulation",
      timestamp: "2025-01-02T03:04:05.006Z",
      content_hash: "0x" + "ef".repeat(32),
      protect_receipt_id: null as string | null,
    };
    const variants = [
      base,
      { ...base, kind: "execute" as const, protect_receipt_id: "rcpt_" + "Z".repeat(22) },
      { ...base, key_id: null, receipt_id: "rcpt_" + "9".repeat(22), tenant_id: "cust_x" },
    ];
    const seen = new Set<string>();
    for (const request_id of requestIds) {
      for (const prev of [null, "0x" + "cd".repeat(32)]) {
        for (const v of variants) {
          const link = { ...v, request_id, prev, seq: 12345 };
          const [row] = await testQuery<{ chain_hash: string }>(db, "receipt_chain_hash", [
            link.receipt_id, link.tenant_id, link.key_id, link.kind, link.request_id, link.timestamp, link.content_hash, link.protect_receipt_id, link.prev, link.seq,
          ]);
          expect(row.chain_hash).toBe(await chainHash(link));
          seen.add(row.chain_hash);
        }
      }
    }
    // Every claim is in the hash: no two of these links share one.
    expect(seen.size).toBe(requestIds.length * 2 * variants.length);
  });

  test("receipts written around the log's writers are refused (WR005); by hand, with the head moved as they move it, only as the exact next links", async () => {
    // Outside a transaction (each refusal ends its own statement), on a tenant of its own.
    {
      const q = db;
      const t = await tenant(q);
      const first = await append(q, t);
      const at = "2025-01-01T00:00:00.000Z";
      const raw = async (requestId: string, seq: number, prev: string | null, overrides: Record<string, unknown> = {}) => {
        const text = canonicalJson(buildPayload({ kind: "protect", input: { action: requestId }, policy: POLICY, decision: "DENIED", reasons: ["n"], rule: "n" }));
        const content_hash = await sha256Hex(text);
        const row = { receipt_id: newId("rcpt_"), tenant_id: t.tenantId, key_id: t.keyId, kind: "protect" as const, request_id: requestId, timestamp: at, decision: "DENIED", payload: text, content_hash, protect_receipt_id: null, seq, prev_hash: prev };
        return { ...row, chain_hash: await chainHash({ ...row, prev, seq }), ...overrides };
      };
      const one = await raw("req_d", 1, first.chain_hash);
      const two = await raw("req_f", 2, one.chain_hash);
      // Straight into the table: its head does not cover them, so even the exact next links are refused.
      expect((await failure(testQuery(q, "receipt_insert_raw", [[one]]))).sqlstate).toBe("WR005");
      expect((await failure(testQuery(q, "receipt_insert_raw", [[one, two]]))).sqlstate).toBe("WR005");
      // With the head moved first (to size 3), as the writers move it: a seq that skips ahead, a link to the
      // wrong predecessor, a chain_hash that is not the hash of its link, a second row that does not link
      // to the first, and rows the head does not end on: all refused.
      const byHand = (rows: unknown[], hash = two.chain_hash) => testQuery(q, "receipt_insert_with_head", [rows, 3, hash]);
      expect((await failure(byHand([await raw("req_a", 99, first.chain_hash)]))).sqlstate).toBe("WR005");
      expect((await failure(byHand([await raw("req_b", 1, "0x" + "ab".repeat(32)), two]))).sqlstate).toBe("WR005");
      expect((await failure(byHand([await raw("req_c", 1, first.chain_hash, { chain_hash: "0x" + "00".repeat(32) }), two]))).sqlstate).toBe("WR005");
      expect((await failure(byHand([one, await raw("req_e", 2, first.chain_hash)]))).sqlstate).toBe("WR005");
      expect((await failure(byHand([one, two], one.chain_hash))).sqlstate).toBe("WR005");
      expect(await q.query("receipts/head", [t.tenantId])).toEqual([{ tenant_id: t.tenantId, tree_size: 1, head_hash: first.chain_hash, event_count: 0 }]);

      // The exact next links are stored, under the head moved once, to the last of them.
      expect(await byHand([one, two])).toEqual([
        { seq: 1, prev_hash: first.chain_hash, chain_hash: one.chain_hash },
        { seq: 2, prev_hash: one.chain_hash, chain_hash: two.chain_hash },
      ]);
      expect(await q.query("receipts/head", [t.tenantId])).toEqual([{ tenant_id: t.tenantId, tree_size: 3, head_hash: two.chain_hash, event_count: 0 }]);
      // receipt_append() continues from there.
      expect((await append(q, t)).seq).toBe(3);
    }
  });

  test("what the two foreign keys checked holds for every writer: a key and a protect receipt of the receipt's own tenant (23503)", async () => {
    const [t, other] = [await tenant(), await tenant()];
    const first = await append(db, t);
    const otherReceipt = await append(db, other);
    // receipt_append(): a decision names a key of its tenant.
    const foreignKey = await failure(append(db, { tenantId: t.tenantId, keyId: other.keyId }));
    expect([foreignKey.sqlstate, refusedConstraint(foreignKey)]).toEqual(["23503", "receipts_key_fkey"]);
    const unknownKey = await failure(append(db, { tenantId: t.tenantId, keyId: newId("key_") }));
    expect([unknownKey.sqlstate, refusedConstraint(unknownKey)]).toEqual(["23503", "receipts_key_fkey"]);
    // receipt_event_append(): an approval's outcome names a protect receipt of its tenant (and the key that asked).
    const outcome = async (overrides: Record<string, unknown>) => {
      const text = canonicalJson({ decision: "DENIED", kind: "approval", outcome: { status: "denied" }, v: 2 });
      return { receipt_id: newId("rcpt_"), tenant_id: t.tenantId, key_id: t.keyId, kind: "approval", request_id: "req_fk", timestamp: new Date().toISOString(), decision: "DENIED", payload: text, content_hash: await sha256Hex(text), signature: "a.b.c", protect_receipt_id: first.receiptId, ...overrides };
    };
    const foreignProtect = await failure(db.query("audit/append", [[await outcome({ protect_receipt_id: otherReceipt.receiptId })]]));
    expect([foreignProtect.sqlstate, refusedConstraint(foreignProtect)]).toEqual(["23503", "receipts_protect_receipt_fkey"]);
    const unknownProtect = await failure(db.query("audit/append", [[await outcome({ protect_receipt_id: newId("rcpt_") })]]));
    expect([unknownProtect.sqlstate, refusedConstraint(unknownProtect)]).toEqual(["23503", "receipts_protect_receipt_fkey"]);
    const outcomeKey = await failure(db.query("audit/append", [[await outcome({ key_id: other.keyId })]]));
    expect([outcomeKey.sqlstate, refusedConstraint(outcomeKey)]).toEqual(["23503", "receipts_key_fkey"]);
    // The same receipts with the tenant's own key and receipt are stored.
    expect(await db.query("audit/append", [[await outcome({})]])).toHaveLength(1);
    expect((await append(db, t)).seq).toBe(2);
  });

  test("the database refuses a direct UPDATE of a stored receipt (WR001)", async () => {
    const t = await tenant();
    const r = await append(db, t, { decision: "DENIED" });
    const err = await failure(testQuery(db, "receipt_update", [r.receiptId]));
    expect(err.sqlstate).toBe("WR001");
    const [stored] = await db.query("receipts/get", [t.tenantId, r.receiptId]);
    expect(stored.decision).toBe("DENIED");
  });

  test("the database refuses DELETE and TRUNCATE of receipts and a rewind of the head (WR001)", async () => {
    const t = await tenant();
    const r = await append(db, t);
    expect((await failure(testQuery(db, "receipt_delete", [r.receiptId]))).sqlstate).toBe("WR001");
    expect((await failure(testQuery(db, "receipt_heads_rewind", [t.tenantId]))).sqlstate).toBe("WR001");
    await committed(async (q) => {
      // Refused by the trigger, or first by the approvals' foreign keys to receipts (0A000): either way nothing goes.
      expect(["WR001", "0A000"]).toContain((await failure(testQuery(q, "receipts_truncate"))).sqlstate);
    });
    expect(await db.query("receipts/get", [t.tenantId, r.receiptId])).toHaveLength(1);
  });

  test("a head moves only forward, within its tenant, to its tenant's latest stored receipt (WR001)", async () => {
    const [t, other] = [await tenant(), await tenant()];
    const first = await append(db, t);
    const second = await append(db, t);
    const set = (tenantId: string, size: number, hash: string | null) =>
      failure(tenantId === t.tenantId ? testQuery(db, "receipt_heads_set", [t.tenantId, size, hash]) : testQuery(db, "receipt_heads_move_tenant", [t.tenantId, tenantId, size, hash]));
    // Ahead of the stored receipts, to another receipt's hash, standing still, back, to another tenant.
    expect((await set(t.tenantId, 3, second.chain_hash)).sqlstate).toBe("WR001");
    expect((await set(t.tenantId, 2, first.chain_hash)).sqlstate).toBe("WR001");
    expect((await set(t.tenantId, 2, "0x" + "ab".repeat(32))).sqlstate).toBe("WR001");
    expect((await set(t.tenantId, 2, second.chain_hash)).sqlstate).toBe("WR001");
    expect((await set(t.tenantId, 1, first.chain_hash)).sqlstate).toBe("WR001");
    // On a Citus cluster no row ever changes its tenant, the column its shard is chosen by (0A000).
    expect((await set(other.tenantId, 2, second.chain_hash)).sqlstate).toBe((await isCitus(db)) ? "0A000" : "WR001");
    expect(await db.query("receipts/head", [t.tenantId])).toEqual([{ tenant_id: t.tenantId, tree_size: 2, head_hash: second.chain_hash, event_count: 0 }]);
    // The chain goes on from there.
    expect((await append(db, t)).seq).toBe(2);
  });

  test("a payload that does not match content_hash or decision is refused", async () => {
    const t = await tenant();
    const text = canonicalJson(buildPayload({ kind: "protect", input: { action: "x" }, policy: POLICY, decision: "DENIED", reasons: ["n"], rule: "n" }));
    const base = { receipt_id: newId("rcpt_"), tenant_id: t.tenantId, key_id: t.keyId, kind: "protect", request_id: "req_1", timestamp: new Date().toISOString(), payload: text, signature: "a.b.c", protect_receipt_id: null };
    const wrongHash = await failure(db.query("receipts/append", [[{ ...base, decision: "DENIED", content_hash: "0x" + "00".repeat(32) }]]));
    expect(refusedConstraint(wrongHash)).toBe("receipts_content_hash_matches_payload");
    const wrongDecision = await failure(db.query("receipts/append", [[{ ...base, decision: "ALLOWED", content_hash: await sha256Hex(text) }]]));
    expect(refusedConstraint(wrongDecision)).toBe("receipts_decision_matches_payload");
    // Neither attempt consumed quota or a seq.
    const [usage] = await db.query("receipts/usage_summary", [t.tenantId, null]);
    expect(usage).toMatchObject({ protect_today: 0, receipts_stored: 0 });
  });
});

describe("idempotency_claim", () => {
  test("claimed, then in_progress, mismatch, completed with the stored response; expired records are free again", async () => {
    const t = await tenant();
    const fp = "a".repeat(64);
    const k = (name: string) => idempotencyKeyHash(name);
    const claim = async (key: string, fingerprint = fp) => (await db.query("idempotency/claim", [t.tenantId, k(key), fingerprint]))[0];
    expect((await claim("k1")).outcome).toBe("claimed");
    expect((await claim("k1")).outcome).toBe("in_progress");
    expect((await claim("k1", "b".repeat(64))).outcome).toBe("mismatch");
    await db.query("idempotency/complete", [t.tenantId, k("k1"), 201, { "content-type": "application/json" }, "c2VhbGVk"]);
    expect(await claim("k1")).toMatchObject({ outcome: "completed", response_status: 201, response_headers: { "content-type": "application/json" }, response_sealed: "c2VhbGVk" });
    // A completed record never changes again.
    await db.query("idempotency/complete", [t.tenantId, k("k1"), 200, {}, "b3RoZXI="]);
    expect((await claim("k1")).response_sealed).toBe("c2VhbGVk");
    // Released claims and records 24 hours old are gone.
    expect((await claim("k2")).outcome).toBe("claimed");
    await db.query("idempotency/release", [t.tenantId, k("k2")]);
    expect((await claim("k2")).outcome).toBe("claimed");
    await testQuery(db, "idempotency_insert_old", [t.tenantId, k("k3"), 25, fp, "b2xk"]);
    expect((await claim("k3")).outcome).toBe("claimed");
    await testQuery(db, "idempotency_insert_old", [t.tenantId, k("k4"), 23, fp, "b2xk"]);
    expect((await claim("k4")).outcome).toBe("completed");
  });
});
