// Reading the receipt log: thin wrappers over sql/queries/receipts/*.sql and the one shape every
// route shows a stored receipt in.
import type { Queryable, QueryRow } from "../db/index.ts";
import { couldNameRow } from "../ids.ts";
import type { ResultPayload } from "../simulation/payload.ts";

/**
 * A stored receipt as receipts/get, list and range read it (payload: the JCS text content_hash
 * covers), kind and decision narrowed to what the table's CHECKs allow.
 */
export type ReceiptRow = QueryRow<"receipts/get"> & { kind: "protect" | "execute"; decision: "ALLOWED" | "DENIED" };

export type ReceiptView = Omit<ReceiptRow, "payload"> & { reasons: string[]; payload: ResultPayload };

export function toReceipt(row: ReceiptRow): ReceiptView {
  const payload = JSON.parse(row.payload) as ResultPayload;
  return {
    receipt_id: row.receipt_id,
    tenant_id: row.tenant_id,
    kind: row.kind,
    seq: row.seq,
    prev_hash: row.prev_hash,
    chain_hash: row.chain_hash,
    key_id: row.key_id,
    protect_receipt_id: row.protect_receipt_id,
    decision: row.decision,
    request_id: row.request_id,
    content_hash: row.content_hash,
    timestamp: row.timestamp,
    reasons: payload.reasons,
    payload,
    signature: row.signature,
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

/** Size and last chain_hash of a tenant's log; undefined for an unknown tenant. */
export async function logHead(db: Queryable, tenantId: string): Promise<{ tree_size: number; head_hash: string | null } | undefined> {
  const row = await db.one("receipts/head", [tenantId]);
  return row && { tree_size: Number(row.tree_size), head_hash: row.head_hash };
}

export type UsageSummary = QueryRow<"receipts/usage_summary">;

/** Today's (or `day`'s, UTC 'YYYY-MM-DD') usage with the current plan's limits. */
export async function usageSummary(db: Queryable, tenantId: string, day: string | null = null): Promise<UsageSummary | undefined> {
  const row = await db.one("receipts/usage_summary", [tenantId, day]);
  return row && { ...row, receipts_stored: Number(row.receipts_stored) };
}
