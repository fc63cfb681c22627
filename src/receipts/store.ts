// Reading the receipt log: thin wrappers over sql/queries/receipts/*.sql and the one shape every
// route shows a stored receipt in.
import type { Queryable, QueryRow } from "../db/index.ts";
import { couldNameRow } from "../ids.ts";
import type { ResultPayload } from "../decide/payload.ts";
import type { EventPayload } from "./event.ts";
import type { OutcomePayload, VotePayload } from "./approval-payload.ts";

type StoredRow = QueryRow<"receipts/get">;

/**
 * A stored receipt as receipts/get, list and range read it (payload: the JCS text content_hash
 * covers), kind, key and decision narrowed to what the table's CHECKs allow: a decision has a key
 * and a decision, an audit event neither.
 */
export type ReceiptRow =
  | (StoredRow & { kind: "protect" | "execute"; key_id: string; decision: "ALLOWED" | "DENIED" })
  | (StoredRow & { kind: "event"; key_id: null; decision: null; protect_receipt_id: null })
  | (StoredRow & { kind: "vote"; key_id: null; decision: null; protect_receipt_id: string })
  | (StoredRow & { kind: "approval"; key_id: string; decision: "ALLOWED" | "DENIED"; protect_receipt_id: string });

/** A stored decision as every route shows it. */
export type DecisionReceiptView = Omit<StoredRow, "payload" | "kind" | "key_id" | "decision"> & {
  kind: "protect" | "execute";
  key_id: string;
  decision: "ALLOWED" | "DENIED";
  reasons: string[];
  payload: ResultPayload;
};

/** A stored audit event as every route shows it: no key, no decision, no reasons. */
export type EventReceiptView = Omit<StoredRow, "payload" | "kind" | "key_id" | "decision" | "protect_receipt_id"> & {
  kind: "event";
  key_id: null;
  protect_receipt_id: null;
  decision: null;
  payload: EventPayload;
};

/** A step of an approval (docs/api.md, "Approvals"): a member's vote, or the outcome for the key that asked. */
export type ApprovalStepView =
  | (Omit<StoredRow, "payload" | "kind" | "key_id" | "decision" | "protect_receipt_id"> & { kind: "vote"; key_id: null; decision: null; protect_receipt_id: string; payload: VotePayload })
  | (Omit<StoredRow, "payload" | "kind" | "key_id" | "decision" | "protect_receipt_id"> & {
      kind: "approval";
      key_id: string;
      decision: "ALLOWED" | "DENIED";
      protect_receipt_id: string;
      payload: OutcomePayload;
    });

export type ReceiptView = DecisionReceiptView | EventReceiptView | ApprovalStepView;

export function toReceipt(row: ReceiptRow): ReceiptView {
  const { receipt_id, tenant_id, seq, prev_hash, chain_hash, protect_receipt_id, request_id, content_hash, timestamp, signature } = row;
  if (row.kind === "event") {
    const payload = JSON.parse(row.payload) as EventPayload;
    const { kind, key_id, decision } = row;
    return { receipt_id, tenant_id, kind, seq, prev_hash, chain_hash, key_id, protect_receipt_id: null, decision, request_id, content_hash, timestamp, payload, signature };
  }
  if (row.kind === "vote") {
    const { kind, key_id, decision } = row;
    return { receipt_id, tenant_id, kind, seq, prev_hash, chain_hash, key_id, protect_receipt_id: row.protect_receipt_id, decision, request_id, content_hash, timestamp, payload: JSON.parse(row.payload) as VotePayload, signature };
  }
  if (row.kind === "approval") {
    const { kind, key_id, decision } = row;
    return { receipt_id, tenant_id, kind, seq, prev_hash, chain_hash, key_id, protect_receipt_id: row.protect_receipt_id, decision, request_id, content_hash, timestamp, payload: JSON.parse(row.payload) as OutcomePayload, signature };
  }
  const payload = JSON.parse(row.payload) as ResultPayload;
  const { kind, key_id, decision } = row;
  return {
    receipt_id, tenant_id, kind, seq, prev_hash, chain_hash, key_id, protect_receipt_id, decision, request_id, content_hash, timestamp,
    reasons: payload.reasons,
    payload,
    signature,
  };
}

export async function getReceiptRow(db: Queryable, tenantId: string, receiptId: string): Promise<ReceiptRow | undefined> {
  if (!couldNameRow(receiptId)) return undefined;
  return db.one("receipts/get", [tenantId, receiptId]) as Promise<ReceiptRow | undefined>;
}

/** Newest first, below `beforeSeq` when given. */
export function listReceiptRows(db: Queryable, tenantId: string, beforeSeq: number | null, limit: number): Promise<ReceiptRow[]> {
  return db.query("receipts/list", [tenantId, beforeSeq, limit]) as Promise<ReceiptRow[]>;
}

/** Oldest first, from <= seq < to, at most limit rows. */
export function receiptRange(db: Queryable, tenantId: string, from: number, to: number, limit: number): Promise<ReceiptRow[]> {
  return db.query("receipts/range", [tenantId, from, to, limit]) as Promise<ReceiptRow[]>;
}

/** A receipt's seq and chain_hash, with the size of the tenant's log: what its inclusion proof needs. */
export type LogLeaf = QueryRow<"receipts/leaf">;

export async function logLeaf(db: Queryable, tenantId: string, receiptId: string): Promise<LogLeaf | undefined> {
  if (!couldNameRow(receiptId)) return undefined;
  return db.one("receipts/leaf", [tenantId, receiptId]);
}

/** The tenant's tree head (size and RFC 9162 root), in one statement; undefined for an unknown tenant. */
export function treeHead(db: Queryable, tenantId: string): Promise<QueryRow<"receipts/tree_head"> | undefined> {
  return db.one("receipts/tree_head", [tenantId]);
}

/** Size and last chain_hash of a tenant's log, and how many of its receipts are events; undefined for an unknown tenant. */
export async function logHead(db: Queryable, tenantId: string): Promise<{ tree_size: number; head_hash: string | null; event_count: number } | undefined> {
  const row = await db.one("receipts/head", [tenantId]);
  return row && { tree_size: Number(row.tree_size), head_hash: row.head_hash, event_count: Number(row.event_count) };
}

export type UsageSummary = QueryRow<"receipts/usage_summary">;

/** Today's (or `day`'s, UTC 'YYYY-MM-DD') usage with the current plan's limits. */
export async function usageSummary(db: Queryable, tenantId: string, day: string | null = null): Promise<UsageSummary | undefined> {
  const row = await db.one("receipts/usage_summary", [tenantId, day]);
  return row && { ...row, receipts_stored: Number(row.receipts_stored) };
}
