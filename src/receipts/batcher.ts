// Group commit for receipt appends. Every append of this process joins the next call of
// receipt_append_batch(): while one batch is in the database, new appends queue, and the next
// batch takes them all. One round trip and one commit then serve many requests, and a busy
// tenant's appends (which take turns on its head row) no longer wait for a commit each. Every
// caller still gets its answer only after its batch committed: nothing is acknowledged early.
import { Coalescer, perDb } from "../db/coalescer.ts";
import { DbError, type Db } from "../db/index.ts";
import { BoundedMap } from "../bounded-map.ts";
import { chainHashSync } from "./fast-crypto.ts";

export interface AppendItem {
  receipt_id: string;
  tenant_id: string;
  key_id: string;
  kind: string;
  request_id: string;
  timestamp: string;
  decision: string;
  payload: string;
  content_hash: string;
  signature: string;
  protect_receipt_id: string | null;
}

export interface AppendResult {
  seq: number;
  prev_hash: string | null;
  chain_hash: string;
  quota_limit: number | null;
  quota_used: number;
}

interface Row extends Omit<AppendResult, "seq"> {
  idx: number;
  seq: number | null;
  error_sqlstate: string | null;
  error_constraint: string | null;
  error_message: string | null;
}

// Large enough to absorb a burst, small enough to keep one transaction short. One batch in flight
// per process: a batch locks the heads of all its tenants, so a second one would only wait for it
// (measured slower with two and four, docs/performance.md section 8).
const OPTIONS = { maxBatch: 200, maxInFlight: 1 };

/** A tenant's log head as this process's last batch left it: the next seq and the last chain_hash. */
interface Head {
  size: number;
  hash: string | null;
}

// Tenants whose heads are remembered at most (a forgotten head only means one batch whose links
// the database computes).
const HEADS_REMEMBERED = 10_000;

/**
 * The items as sent: each with the link it would take after the heads this process last saw
 * (seq, prev_hash, chain_hash), when every tenant of the batch has one; otherwise as they are, and
 * the database computes the links. A claim is only a proposal: receipt_append_batch() takes the
 * claims only when each tenant's first one continues its locked head, and the statement trigger
 * checks every stored link and recomputes every chain_hash (migration 010). Another instance
 * appending to the same tenant makes the claims stale, which costs the computation, nothing else.
 */
export function claimLinks(items: AppendItem[], heads: ReadonlyMap<string, Head>): AppendItem[] | (AppendItem & { seq: number; prev_hash: string | null; chain_hash: string })[] {
  if (!items.every((item) => heads.has(item.tenant_id))) return items;
  const next = new Map<string, Head>();
  return items.map((item) => {
    const head = next.get(item.tenant_id) ?? heads.get(item.tenant_id)!;
    const link = { prev: head.hash, content_hash: item.content_hash, request_id: item.request_id, timestamp: item.timestamp, seq: head.size };
    const chain_hash = chainHashSync(link);
    next.set(item.tenant_id, { size: head.size + 1, hash: chain_hash });
    return { ...item, seq: head.size, prev_hash: head.hash, chain_hash };
  });
}

async function appendBatch(db: Db, heads: Map<string, Head>, items: AppendItem[]): Promise<(AppendResult | Error)[]> {
  let rows: Row[];
  try {
    rows = await db.query<Row>("receipts/append_batch", [claimLinks(items, heads)]);
  } catch (err) {
    // Committed or not, nothing is known about the heads now.
    heads.clear();
    throw err;
  }
  const byIndex = new Map(rows.map((r) => [r.idx, r]));
  const results = items.map((item, i): AppendResult | Error => {
    const row = byIndex.get(i);
    if (!row) return new Error("receipt_append_batch returned no row for an item");
    if (row.error_sqlstate) return new DbError(row.error_sqlstate, row.error_constraint ?? undefined, row.error_message ?? "", "receipts/append_batch");
    return { seq: Number(row.seq), prev_hash: row.prev_hash, chain_hash: row.chain_hash, quota_limit: row.quota_limit, quota_used: row.quota_used };
  });
  // Each tenant's head is now its last stored receipt of this batch (a tenant's items are stored
  // in arrival order, so that is the highest seq).
  results.forEach((result, i) => {
    if (result instanceof Error) return;
    const tenant = items[i].tenant_id;
    const known = heads.get(tenant);
    if (!known || result.seq + 1 > known.size) heads.set(tenant, { size: result.seq + 1, hash: result.chain_hash });
  });
  return results;
}

export type AppendBatcher = Coalescer<AppendItem, AppendResult>;

/** The batcher of a database handle: `batcherFor(db).submit(item)` resolves after its batch committed. */
export const batcherFor = perDb((db: Db): AppendBatcher => {
  const heads = new BoundedMap<string, Head>(HEADS_REMEMBERED);
  return new Coalescer((items) => appendBatch(db, heads, items), OPTIONS);
});
