// The approval rules of sql/schema/12_approvals.sql called directly, each case in a transaction
// that is rolled back: the states and their moves, who may vote and when, and the execute of an
// outcome. Receipts are built here as the service builds them (hash of the JCS text), unsigned.
import { describe, expect, test } from "bun:test";
import { canonicalJson } from "../../src/crypto/canonical.ts";
import { sha256HexSync } from "../../src/crypto/sync.ts";
import type { Queryable } from "../../src/db/index.ts";
import { newId } from "../../src/ids.ts";
import { newToken } from "../../src/accounts/tokens.ts";
import { hashSecret, newSecret, secretHint } from "../../src/keys/secret.ts";
import { testService, uniqueEmail } from "../helpers/service.ts";
import { SQL_PASSWORD_HASH, rolledBackIn, sqlTenant, sqlstate, testQuery } from "../helpers/sql.ts";

const SIG = "e30.e30.c2ln";
const T0 = Date.parse("2030-01-01T00:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const TERMS = { quorum: 2, roles: ["owner", "admin", "approver"], expires_in: 600, execute_within: 300 };

const rolledBack = async (fn: (q: Queryable) => Promise<void>) => rolledBackIn((await testService()).db, fn);

function receipt(fields: { tenant_id: string; key_id: string | null; kind: string; timestamp: string; payload: object; protect_receipt_id: string | null }) {
  const text = canonicalJson(fields.payload);
  const decision = "decision" in fields.payload ? (fields.payload as { decision: string }).decision : null;
  const { payload: _object, ...rest } = fields;
  return { receipt_id: newId("rcpt_"), request_id: "req_test", decision, ...rest, payload: text, content_hash: sha256HexSync(text), signature: SIG };
}

/** A tenant with its owner, an approver, a developer, a key made by the owner, and a pending approval of that key's protect. */
async function pending(q: Queryable, terms = TERMS) {
  const t = await sqlTenant(q, "apv");
  const [owner] = await q.query("members/list", [t.tenantId]);
  const add = async (role: string) => {
    const token = newToken();
    await q.query("members/invite", [newId("inv_"), t.tenantId, owner.member_id, uniqueEmail(role), role, token, `v1.AAAAAAAAAAAAAAAA.${token}`, {}, at(0)]);
    return (await q.query("members/invitation_accept", [token, null, newId("acct_"), SQL_PASSWORD_HASH, newId("mbr_"), at(0)]))[0].member_id as string;
  };
  const approver = await add("approver");
  const approver2 = await add("approver");
  const developer = await add("developer");
  // The signup key has no creator; a key the owner makes has: use one made through api_key_create.
  const keyId = newId("key_");
  const secret = newSecret();
  await q.query("keys/create", [keyId, t.tenantId, "bot", await hashSecret(secret), secretHint(secret), owner.member_id, {}]);
  const protect = receipt({
    tenant_id: t.tenantId,
    key_id: keyId,
    kind: "protect",
    timestamp: at(0),
    payload: { decision: "DENIED", input: { action: "refund.issue" }, kind: "protect", reasons: ["r"], requires_approval: terms, rule: "x", v: 2 },
    protect_receipt_id: null,
  });
  const approvalId = newId("apv_");
  const [row] = await q.query("receipts/append", [[{ ...protect, approval: { approval_id: approvalId, ...terms, rule: "x", action: "refund.issue" } }]]);
  expect(row.refusal).toBeNull();
  return { ...t, keyId, owner: owner.member_id as string, approver, approver2, developer, approvalId, protect };
}
type Pending = Awaited<ReturnType<typeof pending>>;

const voteReceipt = (p: Pending, member: string, vote: string, s: number, role = "approver", actionHash = p.protect.content_hash) =>
  receipt({
    tenant_id: p.tenantId,
    key_id: null,
    kind: "vote",
    timestamp: at(s),
    payload: { action_hash: actionHash, approval_id: p.approvalId, at: at(s), comment_hash: null, kind: "vote", member_id: member, mfa: false, role, v: 2, vote },
    protect_receipt_id: p.protect.receipt_id,
  });
const vote = (q: Queryable, p: Pending, member: string, v = "approve", s = 10, actionHash = p.protect.content_hash, self = false) =>
  q.query("approvals/vote", [p.approvalId, member, v, actionHash, self, voteReceipt(p, member, v, s, "approver", actionHash)]);
const outcomeReceipt = (p: Pending, status: string, s: number, votes: string[] = []) =>
  receipt({
    tenant_id: p.tenantId,
    key_id: p.keyId,
    kind: "approval",
    timestamp: at(s),
    payload: { decision: status === "approved" ? "ALLOWED" : "DENIED", kind: "approval", outcome: { approval_id: p.approvalId, status, votes }, protect_receipt_id: p.protect.receipt_id, v: 2 },
    protect_receipt_id: p.protect.receipt_id,
  });
const settle = (q: Queryable, p: Pending, status: string, s = 20) => q.query("approvals/settle", [p.approvalId, status, outcomeReceipt(p, status, s)]);

/** The SQLSTATE of the last statement of `act` on a fresh pending approval, rolled back. */
async function refusal(act: (q: Queryable, p: Pending) => Promise<unknown>): Promise<string> {
  let state = "";
  await rolledBack(async (q) => {
    state = await sqlstate(act(q, await pending(q)));
  });
  return state;
}

describe("approval states", () => {
  test("a protect with terms opens a pending approval bound to its content hash, expiring expires_in later", async () => {
    await rolledBack(async (q) => {
      const p = await pending(q);
      const [a] = await q.query("approvals/get", [p.tenantId, p.approvalId]);
      expect(a).toMatchObject({ status: "pending", action_hash: p.protect.content_hash, quorum: 2, roles: ["owner", "admin", "approver"], expires_in: 600, execute_within: 300, expires_at: at(600) });
    });
  });

  test("a quorum of approve votes approves; the outcome's execute window starts then", async () => {
    await rolledBack(async (q) => {
      const p = await pending(q);
      await vote(q, p, p.approver, "approve", 10);
      await vote(q, p, p.approver2, "approve", 11);
      expect(await settle(q, p, "approved", 12)).toEqual([{ status: "approved", decided_at: at(12), execute_before: at(312) }]);
    });
  });

  test("approved without a quorum, or with a deny, is refused (WV007); denied needs a deny (WV007); expired only after expiry (WV007)", async () => {
    expect(await refusal((q, p) => settle(q, p, "approved"))).toBe("WV007");
    expect(await refusal(async (q, p) => (await vote(q, p, p.approver), settle(q, p, "approved")))).toBe("WV007");
    expect(await refusal(async (q, p) => (await vote(q, p, p.approver), await vote(q, p, p.approver2, "deny", 11), settle(q, p, "approved")))).toBe("WV007");
    expect(await refusal((q, p) => settle(q, p, "denied"))).toBe("WV007");
    expect(await refusal((q, p) => settle(q, p, "expired", 599))).toBe("WV007");
    await rolledBack(async (q) => {
      const p = await pending(q);
      expect((await settle(q, p, "expired", 600))[0].status).toBe("expired");
    });
  });

  test("a decided approval moves no more (WV002): no second outcome, no vote", async () => {
    expect(await refusal(async (q, p) => (await settle(q, p, "cancelled"), settle(q, p, "cancelled", 21)))).toBe("WV002");
    expect(await refusal(async (q, p) => (await settle(q, p, "cancelled"), vote(q, p, p.approver)))).toBe("WV002");
    // Straight SQL, as an operator might: committed, on a tenant of its own.
    const { db } = await testService();
    const p = await pending(db);
    await settle(db, p, "cancelled");
    expect(await sqlstate(testQuery(db, "approval_force_status", [p.approvalId, "pending"]))).toBe("WV002");
  });

  test("votes: one per member (WV003), not after expiry (WV002), on the hash shown (WV004), of a role the terms name (WV006)", async () => {
    expect(await refusal(async (q, p) => (await vote(q, p, p.approver), vote(q, p, p.approver, "approve", 11)))).toBe("WV003");
    expect(await refusal((q, p) => vote(q, p, p.approver, "approve", 600))).toBe("WV002");
    expect(await refusal((q, p) => vote(q, p, p.approver, "approve", 10, `0x${"0".repeat(64)}`))).toBe("WV004");
    expect(await refusal((q, p) => vote(q, p, p.developer))).toBe("WV006");
    // The owner made the calling key: not theirs to approve in a tenant of several members.
    expect(await refusal((q, p) => vote(q, p, p.owner))).toBe("WV005");
    expect(await refusal((q, p) => vote(q, p, p.owner, "approve", 10, p.protect.content_hash, true))).toBe("WV005");
  });

  test("approvals are never deleted and their terms never change (WV007)", async () => {
    const { db } = await testService();
    const p = await pending(db);
    expect(await sqlstate(testQuery(db, "approval_force_delete", [p.approvalId]))).toBe("WV007");
    expect(await sqlstate(testQuery(db, "approval_force_quorum", [p.approvalId, 1]))).toBe("WV007");
  });
});

describe("executing an outcome", () => {
  const exec = (q: Queryable, p: Pending, outcomeId: string, s: number) =>
    q.query("receipts/append", [[{ ...receipt({ tenant_id: p.tenantId, key_id: p.keyId, kind: "execute", timestamp: at(s), payload: { decision: "ALLOWED", input: { action: "refund.issue" }, kind: "execute", v: 2 }, protect_receipt_id: outcomeId }), approval: null }]]);
  const approved = async (q: Queryable) => {
    const p = await pending(q);
    await vote(q, p, p.approver, "approve", 10);
    await vote(q, p, p.approver2, "approve", 11);
    const out = outcomeReceipt(p, "approved", 12);
    await q.query("approvals/settle", [p.approvalId, "approved", out]);
    return { p, outcomeId: out.receipt_id };
  };

  test("once, within execute_within, and the approval becomes executed", async () => {
    await rolledBack(async (q) => {
      const { p, outcomeId } = await approved(q);
      expect((await exec(q, p, outcomeId, 100))[0].refusal).toBeNull();
      expect((await q.query("approvals/get", [p.tenantId, p.approvalId]))[0].status).toBe("executed");
      expect((await exec(q, p, outcomeId, 101))[0].refusal).toBe("WR007");
    });
  });

  test("late (WR004), or a DENIED outcome (WR003)", async () => {
    await rolledBack(async (q) => {
      const { p, outcomeId } = await approved(q);
      expect((await exec(q, p, outcomeId, 312))[0].refusal).toBe("WR004");
    });
    await rolledBack(async (q) => {
      const p = await pending(q);
      const out = outcomeReceipt(p, "cancelled", 12);
      await q.query("approvals/settle", [p.approvalId, "cancelled", out]);
      expect((await exec(q, p, out.receipt_id, 13))[0].refusal).toBe("WR003");
    });
  });
});
