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
  // Each member's person (account): a vote names both.
  const accounts = new Map<string, string>();
  const invite = async (role: string, email: string, account: string | null, actor = owner.member_id as string) => {
    const token = newToken();
    await q.query("members/invite", [newId("inv_"), t.tenantId, actor, email, role, token, `v1.AAAAAAAAAAAAAAAA.${token}`, {}, at(0)]);
    const [joined] = await q.query("members/invitation_accept", [token, account, newId("acct_"), SQL_PASSWORD_HASH, newId("mbr_"), at(0)]);
    accounts.set(joined.member_id, joined.account_id);
    return joined.member_id as string;
  };
  const add = (role: string) => invite(role, uniqueEmail(role), null);
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
  accounts.set(owner.member_id, (await q.one("approvals/get", [t.tenantId, approvalId]))!.key_created_by_account!);
  /** The member leaves and the same person is invited back: a new membership of the same account. */
  const rejoin = async (member: string, role = "approver", actor = owner.member_id as string) => {
    const [{ email }] = await q.query("members/list", [t.tenantId]).then((rows) => rows.filter((r) => r.member_id === member));
    await q.query("members/remove", [t.tenantId, actor, member, at(1), false]);
    return invite(role, email, accounts.get(member)!, actor);
  };
  return { ...t, keyId, owner: owner.member_id as string, approver, approver2, developer, approvalId, protect, accounts, rejoin };
}
type Pending = Awaited<ReturnType<typeof pending>>;

const voteReceipt = (p: Pending, member: string, vote: string, s: number, role = "approver", actionHash = p.protect.content_hash, self = false, account = p.accounts.get(member)) =>
  receipt({
    tenant_id: p.tenantId,
    key_id: null,
    kind: "vote",
    timestamp: at(s),
    payload: {
      action_hash: actionHash, approval_id: p.approvalId, at: at(s), comment_hash: null, kind: "vote", member_id: member, account_id: account,
      mfa: false, role, v: 2, vote, ...(self ? { self_approval: true } : {}),
    },
    protect_receipt_id: p.protect.receipt_id,
  });
const vote = (q: Queryable, p: Pending, member: string, v = "approve", s = 10, actionHash = p.protect.content_hash, self = false, role = member === p.owner ? "owner" : "approver") =>
  q.query("approvals/vote", [voteReceipt(p, member, v, s, role, actionHash, self)]);
const outcomeReceipt = (p: Pending, status: string, s: number, votes: string[] = [], cancelledBy = status === "cancelled" ? p.keyId : undefined) =>
  receipt({
    tenant_id: p.tenantId,
    key_id: p.keyId,
    kind: "approval",
    timestamp: at(s),
    payload: {
      decision: status === "approved" ? "ALLOWED" : "DENIED", kind: "approval",
      outcome: { approval_id: p.approvalId, status, votes, ...(cancelledBy ? { cancelled_by: cancelledBy } : {}) }, protect_receipt_id: p.protect.receipt_id, v: 2,
    },
    protect_receipt_id: p.protect.receipt_id,
  });
const settle = (q: Queryable, p: Pending, status: string, s = 20, cancelledBy?: string) =>
  q.query("approvals/settle", [p.approvalId, status, outcomeReceipt(p, status, s, [], cancelledBy ?? (status === "cancelled" ? p.keyId : undefined))]);

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

  test("votes: one per person (WV003), not after expiry (WV002), on the hash shown (WV004), of a role the terms name (WV006)", async () => {
    expect(await refusal(async (q, p) => (await vote(q, p, p.approver), vote(q, p, p.approver, "approve", 11)))).toBe("WV003");
    expect(await refusal((q, p) => vote(q, p, p.approver, "approve", 600))).toBe("WV002");
    expect(await refusal((q, p) => vote(q, p, p.approver, "approve", 10, `0x${"0".repeat(64)}`))).toBe("WV004");
    expect(await refusal((q, p) => vote(q, p, p.developer))).toBe("WV006");
    // The owner made the calling key: not theirs to approve in a tenant of several members.
    expect(await refusal((q, p) => vote(q, p, p.owner))).toBe("WV005");
    expect(await refusal((q, p) => vote(q, p, p.owner, "approve", 10, p.protect.content_hash, true))).toBe("WV005");
    // A vote recorded as self-approval by anyone else is refused.
    expect(await refusal((q, p) => vote(q, p, p.approver, "approve", 10, p.protect.content_hash, true))).toBe("WV007");
  });

  test("a quorum counts people: a member who leaves and is invited back votes no second time (WV003)", async () => {
    expect(
      await refusal(async (q, p) => {
        await vote(q, p, p.approver, "approve", 10);
        const again = await p.rejoin(p.approver);
        return vote(q, p, again, "approve", 11);
      }),
    ).toBe("WV003");
  });

  test("the person who created the key may not vote through another membership either (WV005)", async () => {
    // The owner made the key; they leave ownership to another and come back as an approver.
    expect(
      await refusal(async (q, p) => {
        await q.query("members/set_role", [p.tenantId, p.owner, p.approver, "owner"]);
        const back = await p.rejoin(p.owner, "approver", p.approver);
        return vote(q, p, back, "approve", 11);
      }),
    ).toBe("WV005");
  });

  test("a vote names the person of its membership, and the receipt says exactly the vote (WV007)", async () => {
    expect(await refusal((q, p) => q.query("approvals/vote", [voteReceipt(p, p.approver, "approve", 10, "approver", undefined, false, p.accounts.get(p.approver2))]))).toBe("WV007");
    expect(await refusal((q, p) => q.query("approvals/vote", [voteReceipt(p, p.approver, "approve", 10, "admin")]))).toBe("WV007");
  });

  test("the vote that makes the quorum says the outcome is due; a deny says denied", async () => {
    await rolledBack(async (q) => {
      const p = await pending(q);
      expect((await vote(q, p, p.approver, "approve", 10))[0].due).toBeNull();
      expect((await vote(q, p, p.approver2, "approve", 11))[0].due).toBe("approved");
    });
    await rolledBack(async (q) => {
      const p = await pending(q);
      expect((await vote(q, p, p.approver, "deny", 10))[0].due).toBe("denied");
    });
  });

  test("a cancel comes from the key that asked (WV008 for another key) or an owner or admin (WT021 for an approver)", async () => {
    expect(await refusal((q, p) => settle(q, p, "cancelled", 20, newId("key_")))).toBe("WV008");
    expect(await refusal((q, p) => settle(q, p, "cancelled", 20, p.approver))).toBe("WT021");
    await rolledBack(async (q) => {
      const p = await pending(q);
      expect((await settle(q, p, "cancelled", 20, p.owner))[0].status).toBe("cancelled");
    });
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

  test("late (WR010), by another key (WR011), or a DENIED outcome (WR003)", async () => {
    await rolledBack(async (q) => {
      const { p, outcomeId } = await approved(q);
      expect((await exec(q, p, outcomeId, 312))[0].refusal).toBe("WR010");
    });
    await rolledBack(async (q) => {
      const { p, outcomeId } = await approved(q);
      const other = newId("key_");
      const secret = newSecret();
      await q.query("keys/create", [other, p.tenantId, "other bot", await hashSecret(secret), secretHint(secret), p.owner, {}]);
      expect((await exec(q, { ...p, keyId: other }, outcomeId, 100))[0].refusal).toBe("WR011");
      expect((await exec(q, p, outcomeId, 101))[0].refusal).toBeNull();
    });
    await rolledBack(async (q) => {
      const p = await pending(q);
      const out = outcomeReceipt(p, "cancelled", 12);
      await q.query("approvals/settle", [p.approvalId, "cancelled", out]);
      expect((await exec(q, p, out.receipt_id, 13))[0].refusal).toBe("WR003");
    });
  });
});

describe("a retry answers the approval it has (one per key and action hash)", () => {
  const again = (p: Pending, s: number, approvalId = newId("apv_")) => {
    const r = receipt({ tenant_id: p.tenantId, key_id: p.keyId, kind: "protect", timestamp: at(s), payload: JSON.parse(p.protect.payload), protect_receipt_id: null });
    return { ...r, approval: { approval_id: approvalId, ...TERMS, rule: "x", action: "refund.issue" } };
  };
  const approvalsOf = async (q: Queryable, p: Pending) => (await q.query("approvals/list", [p.tenantId, null, null, null, 100])).map((a) => a.approval_id);

  test("while pending: the same approval, none opened", async () => {
    await rolledBack(async (q) => {
      const p = await pending(q);
      const [row] = await q.query("receipts/append", [[again(p, 5)]]);
      expect(row.refusal).toBeNull();
      expect(row.approval).toMatchObject({ answered: true, approval_id: p.approvalId, status: "pending", expires_at: at(600) });
      expect(await approvalsOf(q, p)).toEqual([p.approvalId]);
    });
  });

  test("the same action twice in one call opens one approval", async () => {
    await rolledBack(async (q) => {
      const p = await pending(q);
      await settle(q, p, "cancelled", 2);
      const first = again(p, 5);
      const rows = await q.query("receipts/append", [[first, again(p, 5)]]);
      expect(rows[0].approval).toBeNull();
      expect(rows[1].approval).toMatchObject({ approval_id: first.approval.approval_id, status: "pending" });
      expect((await approvalsOf(q, p)).length).toBe(2);
    });
  });

  test("denied: answered as denied for expires_in after the outcome, then asked again", async () => {
    await rolledBack(async (q) => {
      const p = await pending(q);
      await vote(q, p, p.approver, "deny", 10);
      await settle(q, p, "denied", 20);
      const [within] = await q.query("receipts/append", [[again(p, 619)]]);
      expect(within.approval).toMatchObject({ approval_id: p.approvalId, status: "denied" });
      const later = again(p, 620);
      const [after] = await q.query("receipts/append", [[later]]);
      expect(after.approval).toBeNull();
      expect(await approvalsOf(q, p)).toContain(later.approval.approval_id);
    });
  });

  test("cancelled: the next protect asks again", async () => {
    await rolledBack(async (q) => {
      const p = await pending(q);
      await settle(q, p, "cancelled", 20);
      const [row] = await q.query("receipts/append", [[again(p, 21)]]);
      expect(row.approval).toBeNull();
      expect((await approvalsOf(q, p)).length).toBe(2);
    });
  });

  test("no writer opens a second pending approval of one key and action (23505)", async () => {
    const { db } = await testService();
    const p = await pending(db);
    const plain = { ...again(p, 5), approval: null };
    expect((await db.query("receipts/append", [[plain]]))[0].refusal).toBeNull();
    expect(await sqlstate(testQuery(db, "approval_open_raw", [newId("apv_"), p.tenantId, p.keyId, p.protect.content_hash, plain.receipt_id, at(5)]))).toBe("23505");
  });
});
