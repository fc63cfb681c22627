// An agent whose refund needs a person's approval, in plain TypeScript over fetch (docs/api.md,
// "Approvals"; docs/policy.md for the rule). It asks before acting (protect); a require_approval
// rule answers DENIED with a pending approval, so an agent that knew nothing of approvals would
// simply stop. This one waits for people to decide, with GET /v1/approvals/{id}?wait=30 (the
// answer comes as soon as the status changes, without holding a connection for minutes), then
// executes the approved outcome receipt, once, and prints the receipt of every step.
//
//   WARDEN_URL=https://127.0.0.1:8443 WARDEN_API_KEY=warden_live_... NODE_TLS_REJECT_UNAUTHORIZED=0 \
//     bun examples/approval-agent.ts
//
// The tenant's policy needs a rule that holds refunds for approval (a Pro plan), for example
//   {"id": "refunds_over_100", "effect": "require_approval", "reason": "refund_over_100",
//    "when": {"actions": ["refund.issue"], "amount": {"gt": 100}}, "approval": {"quorum": 1}}
// and a member who may vote (owner, admin or approver; not the one who made the key) approves or
// denies it in the console (the email's link) or with `warden approvals approve ID`.
// REFUND_AMOUNT, REFUND_CURRENCY and REFUND_ORDER change what is asked. Ctrl-C while waiting
// withdraws the request (POST /v1/approvals/{id}/cancel). Exit 0 once executed, 1 otherwise.

export {}; // a module: top-level await below

const BASE = (process.env.WARDEN_URL ?? "https://127.0.0.1:8443").replace(/\/+$/, "");
const API_KEY = process.env.WARDEN_API_KEY;
if (!API_KEY) {
  console.error("set WARDEN_API_KEY to the agent's API key");
  process.exit(2);
}

class WardenError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(`${status} ${code}: ${message}`);
  }
}

/** One call with the agent's key; a non-2xx answer becomes a WardenError with its error code (docs/api.md, Error codes). */
async function call<T = any>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
  const headers: Record<string, string> = { "x-api-key": API_KEY! };
  if (body !== undefined) headers["content-type"] = "application/json";
  // Safe to retry: the same key and body within 24 h get the first answer again, not a second decision.
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  const response = await fetch(BASE + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const answer = (await response.json()) as Record<string, any>;
  if (!response.ok) throw new WardenError(response.status, answer.error, answer.message);
  return answer as T;
}

interface Approval {
  approval_id: string;
  status: "pending" | "approved" | "denied" | "expired" | "cancelled" | "executed";
  protect_receipt_id: string;
  outcome_receipt_id: string | null;
  votes: { member_id: string; vote: "approve" | "deny"; at: string; receipt_id: string }[];
  expires_at: string;
  execute_before: string | null;
}

// 1. Ask before acting.
const refund = {
  action: "refund.issue",
  resource: `order/${process.env.REFUND_ORDER ?? "8812"}`,
  amount: Number(process.env.REFUND_AMOUNT ?? 250),
  currency: process.env.REFUND_CURRENCY ?? "EUR",
};
const asked = await call("POST", "/v1/protect", refund, crypto.randomUUID());
console.log(`protect: ${asked.decision} (${asked.reasons.join("; ")}), receipt ${asked.receipt_id}`);

let outcomeReceipt: string;
let approval: Approval | undefined;
if (asked.decision === "ALLOWED") {
  // No rule held it: act on the protect receipt itself.
  outcomeReceipt = asked.receipt_id;
} else if (!asked.approval) {
  console.log("denied by the policy: nothing to wait for");
  process.exit(1);
} else {
  // 2. Held for people: wait, 30 s at a time, until they decide or the approval expires.
  const id: string = asked.approval.approval_id;
  console.log(`approval ${id} pending until ${asked.approval.expires_at}; action_hash ${asked.approval.action_hash}`);
  // Ctrl-C withdraws the request rather than leaving it for people to decide in vain.
  process.once("SIGINT", () => {
    void call("POST", `/v1/approvals/${id}/cancel`).then(
      () => (console.log(`approval ${id} cancelled`), process.exit(1)),
      () => process.exit(1),
    );
  });
  let current: Approval = { ...asked.approval, protect_receipt_id: asked.receipt_id, outcome_receipt_id: null, votes: [], execute_before: null };
  while (current.status === "pending") {
    try {
      current = await call<Approval>("GET", `/v1/approvals/${id}?wait=30`);
    } catch (err) {
      // A long poll cut by the network or a proxy: ask again after a breath.
      if (err instanceof WardenError) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    if (current.status === "pending") console.log(`still pending: ${current.votes.filter((v) => v.vote === "approve").length} approval(s) so far`);
  }
  approval = current;
  console.log(`approval ${id}: ${approval.status}${approval.votes.length ? `, votes ${approval.votes.map((v) => `${v.vote} ${v.receipt_id}`).join(", ")}` : ""}`);
  if (approval.status !== "approved") {
    // Denied, expired (a denial) or cancelled: the outcome receipt says so, and execute would be refused.
    console.log(JSON.stringify({ ok: false, status: approval.status, protect_receipt_id: asked.receipt_id, outcome_receipt_id: approval.outcome_receipt_id }));
    process.exit(1);
  }
  outcomeReceipt = approval.outcome_receipt_id!;
  console.log(`approved: execute before ${approval.execute_before}, with the outcome receipt ${outcomeReceipt}`);
}

// 3. Act, then record it: execute takes the approved outcome receipt (or an ALLOWED protect) once.
// ... the agent issues the refund here ...
const executed = await call("POST", "/v1/execute", { receipt_id: outcomeReceipt }, crypto.randomUUID());
console.log(`executed: ${executed.decision}, receipt ${executed.receipt_id}`);
console.log(
  JSON.stringify({
    ok: true,
    status: approval ? "executed" : "allowed",
    protect_receipt_id: asked.receipt_id,
    vote_receipt_ids: approval?.votes.map((v) => v.receipt_id) ?? [],
    outcome_receipt_id: approval ? outcomeReceipt : null,
    execute_receipt_id: executed.receipt_id,
  }),
);
process.exit(0);
