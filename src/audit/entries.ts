// One entry of GET /customer/audit from one stored receipt (docs/api.md, "The audit trail"). An
// event's receipt says who did what in its payload; an approval's steps are the approval's own
// signed receipts, and the entry reads the same facts from them:
//
//   approval.requested  the protect that opened it    actor: the key that asked
//   approval.voted      a vote                        actor: the member who voted
//   approval.approved   the outcome, by its status    actor: the member whose vote decided
//   approval.denied       "                             "
//   approval.expired      "                           actor: the service (nobody decided in time)
//   approval.cancelled    "                           actor: the key that withdrew it
//   approval.executed   the execute of the outcome    actor: the key that executed
import type { QueryRow } from "../db/index.ts";
import type { ResultPayload } from "../decide/payload.ts";
import { toReceipt, type ReceiptRow, type ReceiptView } from "../receipts/store.ts";

export type AuditActor = { member_id: string } | { operator: string } | { key_id: string } | { service: "expiry" };

export interface AuditEntry {
  receipt_id: string;
  seq: number;
  event: string;
  actor: AuditActor;
  target: Record<string, unknown>;
  at: string;
  receipt: ReceiptView;
}

type Row = QueryRow<"audit/list">;

export function auditEntry(row: Row): AuditEntry {
  const receipt = toReceipt(row as ReceiptRow);
  const { receipt_id, seq } = receipt;
  const base = { receipt_id, seq, event: row.event!, receipt };
  switch (receipt.kind) {
    case "event": {
      const { actor, target, at } = receipt.payload;
      return { ...base, actor, target, at };
    }
    case "vote": {
      const p = receipt.payload;
      return { ...base, actor: { member_id: p.member_id }, target: { approval_id: p.approval_id, vote: p.vote, action_hash: p.action_hash }, at: p.at };
    }
    case "approval": {
      const o = receipt.payload.outcome;
      const target = { approval_id: o.approval_id, status: o.status, votes: o.votes.length };
      return { ...base, actor: outcomeActor(o.status, o.cancelled_by, row.decided_by, receipt.key_id), target, at: receipt.timestamp };
    }
    case "protect":
    case "execute":
      return { ...base, ...decisionStep(receipt.kind, receipt.key_id, receipt.payload, receipt.receipt_id, row.opened_approval_id), at: receipt.timestamp };
  }
}

function outcomeActor(status: string, cancelledBy: string | undefined, decidedBy: string | null, keyId: string): AuditActor {
  if (status === "expired") return { service: "expiry" };
  if (status === "cancelled") return cancelledBy?.startsWith("mbr_") ? { member_id: cancelledBy } : { key_id: cancelledBy ?? keyId };
  // approved or denied: the last vote the outcome names decided it (its receipt is in the log).
  return decidedBy === null ? { key_id: keyId } : { member_id: decidedBy };
}

function decisionStep(kind: "protect" | "execute", keyId: string, payload: ResultPayload, receiptId: string, openedApprovalId: string | null) {
  if (kind === "protect") {
    return { actor: { key_id: keyId }, target: { approval_id: openedApprovalId, action: payload.input.action, rule: payload.rule ?? null, protect_receipt_id: receiptId } };
  }
  return { actor: { key_id: keyId }, target: { approval_id: payload.outcome?.approval_id ?? null, outcome_receipt_id: payload.outcome?.receipt_id ?? null } };
}
