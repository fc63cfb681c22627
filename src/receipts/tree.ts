// A tenant's Merkle tree as the database keeps it (receipt_tree_node(): subtrees of 16 leaves or
// more stored, smaller ones folded from their receipts): the root of any range a tree head or a
// proof needs is folded from the O(log N) complete subtrees it is made of, read in one query, so
// no request reads or hashes every receipt.
import type { Queryable } from "../db/index.ts";
import { hexToBytes } from "../crypto/canonical.ts";
import { completeSubtrees, foldSubtrees, type Hash, type Range } from "./merkle.ts";
import { entryBundle, leafTile, type TileCoordinate, tileSpan } from "./tiles.ts";

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

/**
 * The body of a C2SP tile or entry bundle of the tenant's log, from its receipts (level 0, entries)
 * or its stored nodes (levels 8 and up) in one query; undefined while the log does not hold all of it.
 */
export async function tileBody(db: Queryable, tenantId: string, tile: TileCoordinate): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const { treeLevel, from, to } = tileSpan(tile);
  const row =
    treeLevel === 0
      ? await db.one("receipts/tile_leaves", [tenantId, from, to])
      : await db.one("receipts/tile_nodes", [tenantId, treeLevel, from, to]);
  if (!row || row.count !== tile.width) return undefined;
  if (tile.level === "entries") return entryBundle(row.hex);
  return treeLevel === 0 ? leafTile(row.hex) : hexToBytes(row.hex);
}
