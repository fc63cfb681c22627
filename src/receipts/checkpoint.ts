// Signed tree heads and proofs over a tenant's receipt log (contract section 4).
import type { Deps } from "../app/deps.ts";
import { AppError } from "../http/errors.ts";
import { bytesToHex } from "../crypto/canonical.ts";
import { consistencyProof, inclusionProof, rootHash } from "./merkle.ts";
import { leafHashes, logHead, type ReceiptRow } from "./store.ts";

async function currentSize(deps: Deps, tenantId: string): Promise<number> {
  return (await logHead(deps.db, tenantId))?.tree_size ?? 0;
}

/** JWS (the receipt signer) over the JCS form of {tenant_id, tree_size, root_hash, timestamp}. */
export async function signedCheckpoint(deps: Deps, tenantId: string) {
  const tree_size = await currentSize(deps, tenantId);
  const root_hash = bytesToHex(rootHash(await leafHashes(deps.db, tenantId, tree_size)));
  const timestamp = deps.now().toISOString();
  const signature = await deps.signer.sign({ tenant_id: tenantId, tree_size, root_hash, timestamp });
  return { ok: true as const, tenant_id: tenantId, tree_size, root_hash, timestamp, signature };
}

/** Inclusion proof of a receipt in the tree of `size` leaves (default: the current log). */
export async function receiptProof(deps: Deps, tenantId: string, receipt: ReceiptRow, size?: number) {
  const current = await currentSize(deps, tenantId);
  const tree_size = size ?? current;
  if (tree_size <= receipt.seq || tree_size > current) {
    throw new AppError("invalid_request", `query/tree_size: must be above the receipt's seq (${receipt.seq}) and at most the log's size (${current}).`);
  }
  const leaves = await leafHashes(deps.db, tenantId, tree_size);
  return {
    ok: true as const,
    receipt_id: receipt.receipt_id,
    seq: receipt.seq,
    tree_size,
    leaf_hash: bytesToHex(leaves[receipt.seq]),
    path: inclusionProof(leaves, receipt.seq, tree_size).map(bytesToHex),
  };
}

/** Consistency proof that the tree of `from` leaves is a prefix of the tree of `to` (default: current). */
export async function logConsistency(deps: Deps, tenantId: string, from: number, to?: number) {
  const current = await currentSize(deps, tenantId);
  const end = to ?? current;
  if (from > end || end > current) {
    throw new AppError("invalid_request", `query: need 1 <= from <= to <= the log's size (${current}).`);
  }
  const leaves = await leafHashes(deps.db, tenantId, end);
  return { ok: true as const, from, to: end, path: consistencyProof(leaves, from, end).map(bytesToHex) };
}
