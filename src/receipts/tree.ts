// A tenant's Merkle tree as the database keeps it (receipt_tree_node(): subtrees of 16 leaves or
// more stored, smaller ones folded from their receipts): the root of any range a tree head or a
// proof needs is folded from the O(log N) complete subtrees it is made of, read in one query, so
// no request reads or hashes every receipt.
import type { Queryable } from "../db/index.ts";
import { hexToBytes } from "../crypto/canonical.ts";
import { completeSubtrees, foldSubtrees, type Hash, type Range } from "./merkle.ts";

/** The roots of the given ranges of the tenant's log (each within its stored size). */
export async function rangeRoots(db: Queryable, tenantId: string, ranges: readonly Range[]): Promise<Hash[]> {
  const parts = ranges.map(([from, to]) => completeSubtrees(from, to));
  const nodes = parts.flat();
  const rows = await db.query("receipts/tree_nodes", [tenantId, nodes.map((n) => n.level), nodes.map((n) => n.index)]);
  const missing = rows.filter((r) => r.hash === null).length;
  if (missing > 0) throw new Error(`receipt tree of ${tenantId} lacks ${missing} of ${nodes.length} nodes`);
  let next = 0;
  return parts.map((part) => foldSubtrees(part.map(() => hexToBytes(rows[next++].hash!))));
}
