// An approval's steps in the audit trail (docs/api.md, "The audit trail"): the protect that opened
// it, each vote, the outcome and the execute are listed as approval.* events, each the approval's
// own signed receipt, with who took the step: the key, the member, or the service (an expiry).
import { beforeAll, describe, expect, test } from "bun:test";
import { bearer, laterService } from "../helpers/accounts.ts";
import { execute, protect, setPlan } from "../helpers/customer.ts";
import { addMember, type Member } from "../helpers/members.ts";
import { checkReceiptLog } from "../../src/receipts/check.ts";
import { call, signup, testService } from "../helpers/service.ts";

const REFUND = { action: "refund.issue", amount: 250, currency: "EUR" };
// Each step asks about an action of its own: a retry of the same one answers the approval it has.
let refunds = 0;
const refund = () => ({ ...REFUND, amount: 200 + ++refunds });
const POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "refund_needs_two", effect: "require_approval", reason: "refund_over_100", when: { actions: ["refund.issue"], amount: { gt: 100 } }, approval: { quorum: 2, expires_in: 60 } },
  ],
};

type Tenant = Awaited<ReturnType<typeof signup>>;
let owner: Tenant;
let alice: Member;
let bob: Member;
let ownerKey: string;

interface Entry {
  receipt_id: string;
  event: string;
  actor: Record<string, string>;
  target: Record<string, unknown>;
  at: string;
  receipt: { kind: string; receipt_id: string };
}

beforeAll(async () => {
  owner = await signup();
  await setPlan(owner.tenantId, "pro");
  [alice, bob] = await Promise.all([addMember(owner.token, "approver"), addMember(owner.token, "approver")]);
  expect((await call("PUT", "/customer/policy", { json: { document: POLICY }, headers: bearer(owner.token) })).status).toBe(200);
  const keys = (await call("GET", "/customer/keys", { headers: bearer(owner.token) })).body.keys as { key_id: string }[];
  expect(keys).toHaveLength(1);
  ownerKey = keys[0]!.key_id;
});

const vote = (who: { token: string }, id: string, v: "approve" | "deny", actionHash: string) =>
  call("POST", `/customer/approvals/${id}/votes`, { json: { vote: v, action_hash: actionHash }, headers: bearer(who.token) });

/** The approval's entries of the trail, oldest first. */
async function stepsOf(approvalId: string, filter = "approval.*"): Promise<Entry[]> {
  const reply = await call("GET", `/customer/audit?limit=100&event=${encodeURIComponent(filter)}`, { headers: bearer(owner.token) });
  expect(reply.status).toBe(200);
  return (reply.body.events as Entry[]).filter((e) => e.target.approval_id === approvalId).reverse();
}

describe("an approval's steps are in the audit trail", () => {
  test("requested by the key, voted and approved by members, executed by the key: each its own receipt", async () => {
    const asked = await protect(owner.apiKey, refund());
    const { approval_id, action_hash } = asked.body.approval;
    await vote(alice, approval_id, "approve", action_hash);
    const approved = await vote(bob, approval_id, "approve", action_hash);
    const outcome = approved.body.outcome_receipt_id as string;
    const executed = await execute(owner.apiKey, outcome);
    expect(executed.status).toBe(200);

    const steps = await stepsOf(approval_id);
    expect(steps.map((e) => [e.event, e.actor])).toEqual([
      ["approval.requested", { key_id: ownerKey }],
      ["approval.voted", { member_id: alice.memberId }],
      ["approval.voted", { member_id: bob.memberId }],
      ["approval.approved", { member_id: bob.memberId }],
      ["approval.executed", { key_id: ownerKey }],
    ]);
    expect(steps.map((e) => e.receipt.kind)).toEqual(["protect", "vote", "vote", "approval", "execute"]);
    expect(steps[0]!.receipt_id).toBe(asked.body.receipt_id);
    expect(steps[0]!.target).toMatchObject({ action: "refund.issue", rule: "refund_needs_two", protect_receipt_id: asked.body.receipt_id });
    expect(steps[1]!.target).toEqual({ approval_id, vote: "approve", action_hash });
    expect(steps[3]!.receipt_id).toBe(outcome);
    expect(steps[3]!.target).toEqual({ approval_id, status: "approved", votes: 2 });
    expect(steps[4]!.receipt_id).toBe(executed.body.receipt_id);
    expect(steps[4]!.target).toEqual({ approval_id, outcome_receipt_id: outcome });

    // Each entry carries its receipt exactly as the log shows it.
    for (const step of steps) {
      const stored = await call("GET", `/customer/receipts/${step.receipt_id}`, { headers: bearer(owner.token) });
      expect(step.receipt).toEqual(stored.body.receipt);
    }
    // One event's filter finds just that step.
    const votes = await stepsOf(approval_id, "approval.voted");
    expect(votes.map((e) => e.actor)).toEqual([{ member_id: alice.memberId }, { member_id: bob.memberId }]);
  });

  test("denied by the member who said deny; cancelled by the key that withdrew it, or by the admin who cancelled it", async () => {
    const first = await protect(owner.apiKey, refund());
    await vote(alice, first.body.approval.approval_id, "approve", first.body.approval.action_hash);
    await vote(bob, first.body.approval.approval_id, "deny", first.body.approval.action_hash);
    const denied = await stepsOf(first.body.approval.approval_id, "approval.denied");
    expect(denied.map((e) => [e.actor, e.target.votes])).toEqual([[{ member_id: bob.memberId }, 2]]);

    const second = await protect(owner.apiKey, refund());
    const cancelled = await call("POST", `/v1/approvals/${second.body.approval.approval_id}/cancel`, { headers: { "x-api-key": owner.apiKey } });
    expect(cancelled.body.status).toBe("cancelled");
    const steps = await stepsOf(second.body.approval.approval_id);
    expect(steps.map((e) => [e.event, e.actor])).toEqual([
      ["approval.requested", { key_id: ownerKey }],
      ["approval.cancelled", { key_id: ownerKey }],
    ]);
    // The outcome's signed payload names who withdrew it.
    expect(steps[1]!.receipt).toMatchObject({ payload: { outcome: { status: "cancelled", cancelled_by: ownerKey } } });

    const third = await protect(owner.apiKey, refund());
    const byOwner = await call("POST", `/customer/approvals/${third.body.approval.approval_id}/cancel`, { headers: bearer(owner.token) });
    expect(byOwner.body.status).toBe("cancelled");
    const thirdSteps = await stepsOf(third.body.approval.approval_id);
    expect(thirdSteps.map((e) => [e.event, e.actor])).toEqual([
      ["approval.requested", { key_id: ownerKey }],
      ["approval.cancelled", { member_id: owner.memberId }],
    ]);
  });

  test("expired by the service when nobody decided in time", async () => {
    const asked = await protect(owner.apiKey, refund());
    const later = await laterService(61_000);
    try {
      expect(await later.deps.approvals.expireDue()).toBeGreaterThanOrEqual(1);
    } finally {
      await later.close();
    }
    const steps = await stepsOf(asked.body.approval.approval_id);
    expect(steps.map((e) => [e.event, e.actor])).toEqual([
      ["approval.requested", { key_id: ownerKey }],
      ["approval.expired", { service: "expiry" }],
    ]);
  });

  test("plain decisions are not in the trail, and the family filter lists approval steps only", async () => {
    const plain = await protect(owner.apiKey, { action: "email.send" });
    expect(plain.body.decision).toBe("DENIED");
    const all = (await call("GET", "/customer/audit?limit=100", { headers: bearer(owner.token) })).body.events as Entry[];
    expect(all.some((e) => e.receipt_id === plain.body.receipt_id)).toBe(false);
    const family = (await call("GET", "/customer/audit?limit=100&event=approval.*", { headers: bearer(owner.token) })).body.events as Entry[];
    expect(family.length).toBeGreaterThan(0);
    expect(family.every((e) => e.event.startsWith("approval."))).toBe(true);
  });

  test("`ops receipts check` passes a log with votes and outcomes: the head counts them with the events, apart from storage", async () => {
    const { db } = await testService();
    const check = await checkReceiptLog(db, owner.tenantId);
    expect(check).toMatchObject({ ok: true, problems: [] });
    const kinds = ((await call("GET", "/customer/receipts?limit=100", { headers: bearer(owner.token) })).body.receipts as { kind: string }[]).map((r) => r.kind);
    expect(kinds).toContain("vote");
    expect(kinds).toContain("approval");
    expect(check!.receipts).toBe(kinds.length);
  });
});
