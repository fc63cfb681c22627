// Human approval of risky actions (docs/api.md, "Approvals"): reading approvals, members' votes,
// the outcome, cancel, and the sweeper that expires them on time. Every step is a receipt signed
// here and stored by a procedure of sql/schema/12_approvals.sql, which enforces the states and
// every rule of a vote and a cancel whoever calls it; this module signs and maps the refusals.
import { sha256HexSync } from "../crypto/sync.ts";
import type { Db, Queryable, QueryRow } from "../db/index.ts";
import { resolveTerms, type ResolvedTerms } from "../decide/policy.ts";
import { AppError, toAppError } from "../http/errors.ts";
import { signReceipt } from "../receipts/sign.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";
import { outcomePayload, type ApprovalStatus, type OutcomeStatus, type Vote, type VotePayload } from "../receipts/approval-payload.ts";
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
  votes: { member_id: string; account_id: string; vote: Vote; at: string; receipt_id: string }[];
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
  /** The person: a quorum counts people, not memberships. */
  account_id: string;
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

  async view(row: Omit<Row, "key_created_by_account">, q: Queryable = this.deps.db): Promise<ApprovalView> {
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
      votes: votes.map((v) => ({ member_id: v.member_id, account_id: v.account_id, vote: v.vote as Vote, at: v.at, receipt_id: v.receipt_id })),
      created_at: row.created_at,
      expires_at: row.expires_at,
      decided_at: row.decided_at,
      execute_before: row.execute_before,
    };
  }

  /**
   * A member's vote on the action they were shown (its hash). Decides the approval when it makes
   * the quorum (approved) or says deny (denied), in the same transaction: ten concurrent votes
   * give one outcome, because each locks the tenant's log head and the approval first. Every rule
   * of a vote is approval_votes_guard()'s; this signs what the person says and maps a refusal.
   */
  async vote(voter: Voter, approvalId: string, vote: Vote, actionHash: string, comment?: string): Promise<ApprovalView> {
    const { db } = this.deps;
    const row = await this.row(voter.tenant_id, approvalId);
    // The person who made the calling key votes on their own bot's request only where the tenant
    // is that one person and its owner allowed it: the receipt says so, the guard decides.
    const self = row.key_created_by_account === voter.account_id;
    // The key is loaded before the transaction: inside it, on the embedded database, a read of the
    // signer's own would wait for the transaction's end (receipts are signed with signHeld()).
    await this.deps.signer.ready();
    try {
      await db.tx(async (q) => {
        const at = this.deps.now().toISOString();
        const payload: VotePayload = {
          v: 2,
          kind: "vote",
          approval_id: approvalId,
          action_hash: actionHash,
          vote,
          member_id: voter.member_id,
          account_id: voter.account_id,
          role: voter.role as VotePayload["role"],
          comment_hash: comment === undefined || comment === "" ? null : sha256HexSync(comment),
          mfa: voter.mfa_active,
          ...(self ? { self_approval: true as const } : {}),
          at,
        };
        const receipt = await this.sign({ tenantId: voter.tenant_id, keyId: null, kind: "vote", requestId: voter.request_id, timestamp: at, payload, protectReceiptId: row.protect_receipt_id });
        const tally = (await q.one("approvals/vote", [receipt]))!;
        if (tally.due) await this.settle(q, await this.view(row, q), tally.due as OutcomeStatus, tally.vote_receipt_ids ?? [], voter.request_id);
      });
    } catch (err) {
      const { error } = toAppError(err);
      // The refusal names what the terms ask of a voter.
      if (error.code === "forbidden_role") {
        const roles = termsOf(row).roles;
        const lowest = ROLE_ORDER.find((r) => roles.includes(r as never))!;
        throw new AppError("forbidden_role", `The terms of this approval let ${roles.join(", ")} vote; you are ${voter.role}.`, { fields: { required_role: lowest } });
      }
      throw err;
    }
    this.deps.committed?.();
    return this.get(voter.tenant_id, approvalId);
  }

  /**
   * Withdraws a pending request: by the key that asked (POST /v1/approvals/{id}/cancel) or by an
   * owner or admin (POST /customer/approvals/{id}/cancel); approval_settle() checks who, and
   * that it is still pending (409 not_pending once decided).
   */
  async cancel(tenantId: string, approvalId: string, by: string, requestId: string): Promise<ApprovalView> {
    const before = await this.get(tenantId, approvalId);
    await this.deps.signer.ready();
    await this.deps.db.tx(async (q) => {
      await this.settle(q, before, "cancelled", before.votes.map((v) => v.receipt_id), requestId, by);
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

  /** A receipt of an approval, hashed and signed, as receipt_append_one() takes it (receipt_event_append() stores it). */
  private async sign(args: { tenantId: string; keyId: string | null; kind: "vote" | "approval"; requestId: string; timestamp: string; payload: object; protectReceiptId: string }) {
    const receipt = await signReceipt((claims) => this.deps.signer.signHeld(claims), args);
    return { ...receipt, decision: "decision" in args.payload ? (args.payload as { decision: string }).decision : null };
  }

}

function termsOf(row: Pick<Row, "quorum" | "roles" | "expires_in" | "execute_within">): ResolvedTerms {
  return resolveTerms({ quorum: row.quorum, roles: row.roles as ResolvedTerms["roles"], expires_in: row.expires_in, execute_within: row.execute_within });
}
