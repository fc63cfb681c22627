// Human approval of risky actions (docs/api.md, "Approvals"): reading approvals, members' votes,
// the outcome, cancel, and the sweeper that expires them on time. Every step is a receipt signed
// here and stored by a procedure of sql/schema/12_approvals.sql, which enforces the states whoever
// calls it; the checks below only answer early and name the error precisely.
import { sha256HexSync } from "../crypto/sync.ts";
import type { Db, Queryable, QueryRow } from "../db/index.ts";
import { resolveTerms, type ResolvedTerms } from "../decide/policy.ts";
import { AppError, toAppError } from "../http/errors.ts";
import { signReceipt } from "../receipts/sign.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";
import { outcomePayload, type ApprovalStatus, type OutcomeStatus, type Vote, type VotePayload } from "./payload.ts";
import type { Logger } from "../log.ts";

type Row = QueryRow<"approvals/get">;

/** An approval as the API shows it (GET /v1/approvals/{id}, the console's inbox). */
export interface ApprovalView {
  approval_id: string;
  tenant_id: string;
  status: ApprovalStatus;
  protect_receipt_id: string;
  outcome_receipt_id: string | null;
  execute_receipt_id: string | null;
  action_hash: string;
  key_id: string;
  rule: string;
  quorum: number;
  terms: ResolvedTerms;
  votes: { member_id: string; vote: Vote; at: string; receipt_id: string }[];
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  execute_before: string | null;
}

const ROLE_ORDER = ["viewer", "approver", "developer", "admin", "owner"];

export interface ApprovalDeps {
  db: Db;
  signer: ReceiptSigner;
  now: () => Date;
  log: Logger;
  /** After a step commits: its webhook deliveries go out now, not at the next poll. */
  committed?: () => void;
}

/** A member voting, from their session. */
export interface Voter {
  tenant_id: string;
  member_id: string;
  role: string;
  mfa_active: boolean;
  request_id: string;
}

export class Approvals {
  constructor(private readonly deps: ApprovalDeps) {}

  /** One approval of the tenant, with its votes; 404 for any other. */
  async get(tenantId: string, approvalId: string, q: Queryable = this.deps.db): Promise<ApprovalView> {
    return this.view(await this.row(tenantId, approvalId, q), q);
  }

  /** The approval's row (its creator of the calling key too, which views leave out); 404 for any other. */
  private async row(tenantId: string, approvalId: string, q: Queryable = this.deps.db): Promise<Row> {
    const row = /^apv_[0-9A-Za-z]{22}$/.test(approvalId) ? await q.one("approvals/get", [tenantId, approvalId]) : undefined;
    if (!row) throw new AppError("not_found", "No such approval.");
    return row;
  }

  async view(row: Row, q: Queryable = this.deps.db): Promise<ApprovalView> {
    const votes = await q.query("approvals/votes", [row.tenant_id, row.approval_id]);
    return {
      approval_id: row.approval_id,
      tenant_id: row.tenant_id,
      status: row.status as ApprovalStatus,
      protect_receipt_id: row.protect_receipt_id,
      outcome_receipt_id: row.outcome_receipt_id,
      execute_receipt_id: row.execute_receipt_id,
      action_hash: row.action_hash,
      key_id: row.key_id,
      rule: row.rule,
      quorum: row.quorum,
      terms: termsOf(row),
      votes: votes.map((v) => ({ member_id: v.member_id, vote: v.vote as Vote, at: v.at, receipt_id: v.receipt_id })),
      created_at: row.created_at,
      expires_at: row.expires_at,
      decided_at: row.decided_at,
      execute_before: row.execute_before,
    };
  }

  /**
   * A member's vote on the action they were shown (its hash). Decides the approval when it makes
   * the quorum (approved) or says deny (denied), in the same transaction: ten concurrent votes
   * give one outcome, because each locks the tenant's log head and the approval first.
   */
  async vote(voter: Voter, approvalId: string, vote: Vote, actionHash: string, comment?: string): Promise<ApprovalView> {
    const { db } = this.deps;
    const [row, settings] = await Promise.all([this.row(voter.tenant_id, approvalId), db.one("members/settings", [voter.tenant_id])]);
    const before = await this.view(row);
    if (before.status !== "pending") throw new AppError("not_pending", "This approval is no longer pending: it was decided, expired or cancelled.");
    if (!before.terms.roles.includes(voter.role as never)) {
      const lowest = ROLE_ORDER.find((r) => before.terms.roles.includes(r as never))!;
      throw new AppError("forbidden_role", `The terms of this approval let ${before.terms.roles.join(", ")} vote; you are ${voter.role}.`, { fields: { required_role: lowest } });
    }
    // The member who made the calling key may not approve their own bot's request, unless the
    // tenant is that one person and its owner allowed it (the vote's receipt then says so).
    let self = false;
    if (row.key_created_by === voter.member_id) {
      const members = await db.query("members/list", [voter.tenant_id]);
      if (!(settings?.allow_self_approval && members.length === 1 && voter.role === "owner")) {
        throw new AppError("self_approval", "You created the key that asked: someone else must approve its request.");
      }
      self = true;
    }
    if (actionHash !== before.action_hash) throw new AppError("action_changed", "The action is not the one you were shown: load the approval again and vote on what it says now.");

    // The key is loaded before the transaction: inside it, on the embedded database, a read of the
    // signer's own would wait for the transaction's end (receipts are signed with signHeld()).
    await this.deps.signer.ready();
    await db.tx(async (q) => {
      const at = this.deps.now().toISOString();
      const payload: VotePayload = {
        v: 2,
        kind: "vote",
        approval_id: approvalId,
        action_hash: actionHash,
        vote,
        member_id: voter.member_id,
        role: voter.role as VotePayload["role"],
        comment_hash: comment === undefined || comment === "" ? null : sha256HexSync(comment),
        mfa: voter.mfa_active,
        ...(self ? { self_approval: true as const } : {}),
        at,
      };
      const receipt = await this.sign({ tenantId: voter.tenant_id, keyId: null, kind: "vote", requestId: voter.request_id, timestamp: at, payload, protectReceiptId: before.protect_receipt_id });
      const tally = (await q.one("approvals/vote", [approvalId, voter.member_id, vote, actionHash, self, receipt]))!;
      const status: OutcomeStatus | undefined = tally.denies > 0 ? "denied" : tally.approves >= tally.quorum ? "approved" : undefined;
      if (status) await this.settle(q, before, status, tally.vote_receipt_ids ?? [], voter.request_id);
    });
    this.deps.committed?.();
    return this.get(voter.tenant_id, approvalId);
  }

  /** The agent withdraws its request (POST /v1/approvals/{id}/cancel): 409 not_pending once decided. */
  async cancel(tenantId: string, approvalId: string, keyId: string, requestId: string): Promise<ApprovalView> {
    const before = await this.get(tenantId, approvalId);
    if (before.status !== "pending") throw new AppError("not_pending", "This approval is no longer pending: it was decided, expired or cancelled.");
    await this.deps.signer.ready();
    await this.deps.db.tx(async (q) => {
      await this.settle(q, before, "cancelled", before.votes.map((v) => v.receipt_id), requestId, keyId);
    });
    this.deps.committed?.();
    return this.get(tenantId, approvalId);
  }

  /**
   * Expires every pending approval whose time is up, each with its DENIED outcome receipt; run by
   * the sweeper every second, so expiry happens on time even when nobody asks. Answers how many.
   */
  async expireDue(limit = 100): Promise<number> {
    const due = await this.deps.db.query("approvals/due", [limit, this.deps.now().toISOString()]);
    let expired = 0;
    for (const row of due) {
      try {
        await this.deps.signer.ready();
        await this.deps.db.tx(async (q) => {
          const current = (await q.one("approvals/get", [row.tenant_id, row.approval_id]))!;
          const view = await this.view(current, q);
          await this.settle(q, view, "expired", view.votes.map((v) => v.receipt_id), `sweep-${row.approval_id}`);
        });
        expired++;
        this.deps.committed?.();
      } catch (err) {
        // Decided meanwhile (a vote or cancel won the race): nothing to expire.
        if (!(toAppError(err).error.code === "not_pending")) this.deps.log.warn("approval_expiry_failed", { approval_id: row.approval_id, error: String(err) });
      }
    }
    return expired;
  }

  private async settle(q: Queryable, a: ApprovalView, status: OutcomeStatus, votes: string[], requestId: string, cancelledBy?: string): Promise<void> {
    const at = this.deps.now().toISOString();
    const payload = outcomePayload({
      approvalId: a.approval_id,
      actionHash: a.action_hash,
      status,
      votes,
      terms: a.terms,
      expiresAt: a.expires_at,
      protectReceiptId: a.protect_receipt_id,
      cancelledBy,
    });
    const receipt = await this.sign({ tenantId: a.tenant_id, keyId: a.key_id, kind: "approval", requestId, timestamp: at, payload, protectReceiptId: a.protect_receipt_id });
    await q.one("approvals/settle", [a.approval_id, status, receipt]);
  }

  /** A receipt of an approval, hashed and signed, as receipt_append_one() takes it. */
  private async sign(args: { tenantId: string; keyId: string | null; kind: "vote" | "approval"; requestId: string; timestamp: string; payload: object; protectReceiptId: string }) {
    const receipt = await signReceipt((claims) => this.deps.signer.signHeld(claims), args);
    return { ...receipt, decision: "decision" in args.payload ? (args.payload as { decision: string }).decision : null };
  }

}

function termsOf(row: Pick<Row, "quorum" | "roles" | "expires_in" | "execute_within">): ResolvedTerms {
  return resolveTerms({ quorum: row.quorum, roles: row.roles as ResolvedTerms["roles"], expires_in: row.expires_in, execute_within: row.execute_within });
}
