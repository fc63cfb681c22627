// Group commit for receipt appends. Every append of this process joins the next call of
// receipt_append_batch(): while one batch is in the database, new appends queue, and the next
// batch takes them all. One round trip and one commit then serve many requests, and a busy
// tenant's appends (which take turns on its head row) no longer wait for a commit each. Every
// caller still gets its answer only after its batch committed: nothing is acknowledged early.
import { Coalescer, perDb } from "../db/coalescer.ts";
import { DbError, type Db } from "../db/index.ts";

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

async function appendBatch(db: Db, items: AppendItem[]): Promise<(AppendResult | Error)[]> {
  const rows = await db.query<Row>("receipts/append_batch", [items]);
  const byIndex = new Map(rows.map((r) => [r.idx, r]));
  return items.map((_, i) => {
    const row = byIndex.get(i);
    if (!row) return new Error("receipt_append_batch returned no row for an item");
    if (row.error_sqlstate) return new DbError(row.error_sqlstate, row.error_constraint ?? undefined, row.error_message ?? "", "receipts/append_batch");
    return { seq: Number(row.seq), prev_hash: row.prev_hash, chain_hash: row.chain_hash, quota_limit: row.quota_limit, quota_used: row.quota_used };
  });
}

export type AppendBatcher = Coalescer<AppendItem, AppendResult>;

/** The batcher of a database handle: `batcherFor(db).submit(item)` resolves after its batch committed. */
export const batcherFor = perDb((db: Db): AppendBatcher => new Coalescer((items) => appendBatch(db, items), OPTIONS));
