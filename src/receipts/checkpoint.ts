// Signed tree heads and proofs over a tenant's receipt log (docs/api.md, Receipts and the receipt log), read from the
// stored tree (tree.ts): each costs O(log N) stored nodes whatever the log's size, in two
// statements at most (a tree head in one), since each statement is most of a log read's cost.
import type { Config } from "../config.ts";
import type { Queryable } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { bytesToHex } from "../crypto/canonical.ts";
import { consistencyRanges, inclusionRanges } from "./merkle.ts";
import { checkpointBody, checkpointOrigin } from "./note.ts";
import { logHead, type LogLeaf, treeHead } from "./store.ts";
import { receiptLeaf } from "./chain.ts";
import type { ReceiptSigner } from "./signer.ts";
import { rangeRoots } from "./tree.ts";

async function currentSize(db: Queryable, tenantId: string): Promise<number> {
  return (await logHead(db, tenantId))?.tree_size ?? 0;
}

/**
 * JWS (the receipt signer) over the JCS form of {tenant_id, tree_size, root_hash, timestamp},
 * and the same head as a C2SP checkpoint in a signed note under the log's origin.
 */
export async function signedCheckpoint(deps: { db: Queryable; signer: ReceiptSigner; now: () => Date; config: Pick<Config, "publicUrl"> }, tenantId: string) {
  const head = await treeHead(deps.db, tenantId);
  if (!head?.root_hash) throw new Error(`receipt tree of ${tenantId} lacks nodes of its head`);
  const { tree_size, root_hash } = head;
  const timestamp = deps.now().toISOString();
  const signature = await deps.signer.sign({ tenant_id: tenantId, tree_size, root_hash, timestamp });
  const origin = checkpointOrigin(deps.config.publicUrl, tenantId);
  const text = checkpointBody(origin, tree_size, root_hash);
  const { note, verifierKey: note_verifier_key } = await deps.signer.signNote(text, origin);
  return { ok: true as const, tenant_id: tenantId, tree_size, root_hash, timestamp, signature, note, note_verifier_key };
}

/** Inclusion proof of a receipt (its leaf as logLeaf reads it) in the tree of `size` leaves (default: the log's size then). */
export async function receiptProof(db: Queryable, tenantId: string, receipt: LogLeaf, size?: number) {
  const current = receipt.tree_size;
  const tree_size = size ?? current;
  if (tree_size <= receipt.seq || tree_size > current) {
    throw new AppError("invalid_request", `query/tree_size: must be above the receipt's seq (${receipt.seq}) and at most the log's size (${current}).`);
  }
  const path = await rangeRoots(db, tenantId, inclusionRanges(receipt.seq, tree_size));
  return {
    ok: true as const,
    receipt_id: receipt.receipt_id,
    seq: receipt.seq,
    tree_size,
    leaf_hash: bytesToHex(receiptLeaf(receipt.chain_hash)),
    path: path.map(bytesToHex),
  };
}

/** Consistency proof that the tree of `from` leaves is a prefix of the tree of `to` (default: current). */
export async function logConsistency(db: Queryable, tenantId: string, from: number, to?: number) {
  const current = await currentSize(db, tenantId);
  const end = to ?? current;
  if (from > end || end > current) {
    throw new AppError("invalid_request", `query: need 1 <= from <= to <= the log's size (${current}).`);
  }
  const path = await rangeRoots(db, tenantId, consistencyRanges(from, end));
  return { ok: true as const, from, to: end, path: path.map(bytesToHex) };
}
