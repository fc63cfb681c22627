// Group commit for receipt appends. Every append of this process joins the next call of
// receipt_append_batch(): while one batch is in the database, new appends queue, and the next
// batch takes them all. One round trip and one commit then serve many requests, and a busy
// tenant's appends (which take turns on its head row) no longer wait for a commit each. Every
// caller still gets its answer only after its batch committed: nothing is acknowledged early.
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

interface Waiting {
  item: AppendItem;
  resolve: (result: AppendResult) => void;
  reject: (err: unknown) => void;
}

// Large enough to absorb a burst, small enough to keep one transaction short.
const MAX_BATCH = 200;
// A few batches in flight: one tenant's take turns on its head row, other tenants' run in parallel.
const MAX_IN_FLIGHT = 4;

export class AppendBatcher {
  private queue: Waiting[] = [];
  private inFlight = 0;

  constructor(private readonly db: Db) {}

  append(item: AppendItem): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.inFlight++;
      this.run(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async run(batch: Waiting[]): Promise<void> {
    let rows: Row[];
    try {
      rows = await this.db.query<Row>("receipts/append_batch", [batch.map((w) => w.item)]);
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    const byIndex = new Map(rows.map((r) => [r.idx, r]));
    batch.forEach((w, i) => {
      const row = byIndex.get(i);
      if (!row) return w.reject(new Error("receipt_append_batch returned no row for an item"));
      if (row.error_sqlstate) return w.reject(new DbError(row.error_sqlstate, row.error_constraint ?? undefined, row.error_message ?? "", "receipts/append_batch"));
      w.resolve({ seq: Number(row.seq), prev_hash: row.prev_hash, chain_hash: row.chain_hash, quota_limit: row.quota_limit, quota_used: row.quota_used });
    });
  }
}

const batchers = new WeakMap<Db, AppendBatcher>();

/** The batcher of a database handle (one per Db, so tests with several databases stay apart). */
export function batcherFor(db: Db): AppendBatcher {
  let batcher = batchers.get(db);
  if (!batcher) batchers.set(db, (batcher = new AppendBatcher(db)));
  return batcher;
}
