// A tenant's stored chain walked from seq 0, as an auditor would: every receipt links to the one
// before it and its chain_hash is the hash of its link (docs/api.md, Receipts and the receipt log).
import { expect } from "bun:test";
import type { Db } from "../../src/db/index.ts";
import { chainHash } from "../../src/receipts/chain.ts";

/** Expects exactly `size` receipts, seq 0 to size - 1, each linking to the one before; gives the last chain_hash. */
export async function expectChainWalks(db: Db, tenantId: string, size: number): Promise<string | null> {
  const rows = await db.query("receipts/range", [tenantId, 0, size, size]);
  expect(rows).toHaveLength(size);
  let prev = null as string | null;
  for (const [i, row] of rows.entries()) {
    expect([Number(row.seq), row.prev_hash]).toEqual([i, prev]);
    prev = await chainHash({ ...row, kind: row.kind as "protect" | "execute", prev, seq: i });
    expect(row.chain_hash).toBe(prev!);
  }
  return prev;
}
