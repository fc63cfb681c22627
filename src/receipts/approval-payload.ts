// The payloads of an approval's receipts (docs/api.md, "Approvals"): a member's vote and the
// outcome. Here, below both the receipt store and src/approvals/, which read them. Pure: hashed, signed and stored like every receipt, and read again by the offline check
// of an approval bundle (src/approvals/bundle.ts). Keys are chosen so that an outcome's JCS text starts with
// "decision", as the receipts table requires of every receipt that carries one.
import { Type } from "@sinclair/typebox";
import { ApprovalTerms } from "../decide/policy.ts";

const Hash = Type.String({ pattern: "^0x[0-9a-f]{64}$" });
const Role = Type.Union([Type.Literal("owner"), Type.Literal("admin"), Type.Literal("developer"), Type.Literal("approver"), Type.Literal("viewer")]);

export type Vote = "approve" | "deny";
export type ApprovalStatus = "pending" | "approved" | "denied" | "expired" | "cancelled" | "executed";
export type OutcomeStatus = "approved" | "denied" | "expired" | "cancelled";

/** A member's vote: on which approval, on which exact action (its protect receipt's content_hash), with what. */
export interface VotePayload {
  v: 2;
  kind: "vote";
  approval_id: string;
  action_hash: string;
  vote: Vote;
  member_id: string;
  /** The person behind the membership: a quorum counts people, whatever memberships they held. */
  account_id: string;
  /** The member's role when they voted: the terms name the roles that may vote. */
  role: "owner" | "admin" | "developer" | "approver" | "viewer";
  /** SHA-256 of the comment (the comment itself stays in the service), or null without one. */
  comment_hash: string | null;
  /** The session that voted passed a second factor. */
  mfa: boolean;
  /** Present (true) only when a one-member tenant's owner approved their own key's request. */
  self_approval?: true;
  at: string;
}

export const VotePayload = Type.Object({
  v: Type.Literal(2),
  kind: Type.Literal("vote"),
  approval_id: Type.String({ pattern: "^apv_" }),
  action_hash: Hash,
  vote: Type.Union([Type.Literal("approve"), Type.Literal("deny")]),
  member_id: Type.String({ pattern: "^mbr_" }),
  account_id: Type.String({ pattern: "^acct_" }),
  role: Role,
  comment_hash: Type.Union([Hash, Type.Null()]),
  mfa: Type.Boolean(),
  self_approval: Type.Optional(Type.Literal(true)),
  at: Type.String({ format: "date-time" }),
});

/** The outcome: ALLOWED for approved, DENIED for denied, expired or cancelled, naming the votes that decided. */
export interface OutcomePayload {
  decision: "ALLOWED" | "DENIED";
  kind: "approval";
  outcome: {
    approval_id: string;
    action_hash: string;
    status: OutcomeStatus;
    /** The votes' receipt ids, in the order they were cast. */
    votes: string[];
    terms: Required<ApprovalTerms>;
    expires_at: string;
    /** A cancelled approval: the key that asked (it withdrew its request), or the owner or admin (member) who cancelled it. */
    cancelled_by?: string;
  };
  protect_receipt_id: string;
  v: 2;
}

export const OutcomePayload = Type.Object({
  decision: Type.Union([Type.Literal("ALLOWED"), Type.Literal("DENIED")]),
  kind: Type.Literal("approval"),
  outcome: Type.Object({
    approval_id: Type.String({ pattern: "^apv_" }),
    action_hash: Hash,
    status: Type.Union([Type.Literal("approved"), Type.Literal("denied"), Type.Literal("expired"), Type.Literal("cancelled")]),
    votes: Type.Array(Type.String({ pattern: "^rcpt_" })),
    terms: Type.Required(ApprovalTerms),
    expires_at: Type.String({ format: "date-time" }),
    cancelled_by: Type.Optional(Type.String({ pattern: "^(key|mbr)_", description: "a cancelled approval: the key that asked (it withdrew its request), or the member who cancelled it" })),
  }),
  protect_receipt_id: Type.String({ pattern: "^rcpt_" }),
  v: Type.Literal(2),
});

export function outcomePayload(args: {
  approvalId: string;
  actionHash: string;
  status: OutcomeStatus;
  votes: string[];
  terms: Required<ApprovalTerms>;
  expiresAt: string;
  protectReceiptId: string;
  /** A cancel: the key that withdrew the request, or the member who cancelled it. */
  cancelledBy?: string;
}): OutcomePayload {
  const t = args.terms;
  return {
    decision: args.status === "approved" ? "ALLOWED" : "DENIED",
    kind: "approval",
    outcome: {
      approval_id: args.approvalId,
      action_hash: args.actionHash,
      status: args.status,
      votes: [...args.votes],
      terms: { quorum: t.quorum, roles: [...t.roles], expires_in: t.expires_in, execute_within: t.execute_within },
      expires_at: args.expiresAt,
      ...(args.cancelledBy === undefined ? {} : { cancelled_by: args.cancelledBy }),
    },
    protect_receipt_id: args.protectReceiptId,
    v: 2,
  };
}
