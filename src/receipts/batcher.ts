// Group commit for receipt appends. Every append of this process joins the next call of
// receipt_append_batch() (a batch of one item goes through receipt_append_item(), which costs a
// lone append less): while one batch is in the database, new appends queue, and the next
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
  /**
   * Set when the item was decided under a key context read for an earlier request (a hint,
   * src/keys/authenticate.ts): the tenant's key_context_epoch read with it. The append refuses the
   * item (WR006, nothing stored) when the epoch has moved since (migration 012).
   */
  key_epoch?: number | string;
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

// Large enough to absorb a burst, small enough to keep one transaction short. Batches go down one
// pipelined session (Db.pipeline): a batch locks the heads of all its tenants, so batches on two
// server sessions would only wait for each other (measured slower, docs/performance.md section 8),
// but on one session the next batch is already there when the last one commits, and the database
// goes from one to the next without a round trip (section 15).
const MAX_BATCH = 200;
// Where the database runs outside this thread (a PostgreSQL server, PGlite's thread), two batches
// in flight: one running and the next queued behind it, while this thread answers the callers of
// the last and signs the receipts of the next (a third only made batches smaller; sections 15 and
// 27). PGlite in this thread has nothing to overlap: one batch at a time, and a batch waits (at
// most LINGER_MS) for as many appends as the last one had, so that the callers it answered, who
// come back together, share one batch's fixed cost (~3.3 ms) instead of two (section 24).
const IN_FLIGHT_OFF_THREAD = 2;
const LINGER_MS = 2;

/** A tenant's log head: the next seq and the last chain_hash. */
interface Head {
  size: number;
  hash: string | null;
}

// Tenants whose heads are remembered at most (a forgotten head only means one batch whose links
// the database computes).
const HEADS_REMEMBERED = 10_000;

/**
 * What the batcher knows of the heads: each tenant's head as it will be once every batch sent so
 * far is stored as sent, where that is known. A batch sent with claims moves its tenants' heads to
 * its last claims at once, so the next batch can claim while it is still in flight; a batch sent
 * without claims forgets its tenants until its answer. An answer that does not match what was
 * claimed (a refusal, another instance's appends, no claims) sets the heads from what was stored,
 * unless a later batch has been sent for that tenant since: then the head is forgotten, and that
 * later batch's answer sets it.
 */
export class HeadsMemo {
  private readonly heads = new BoundedMap<string, Head>(HEADS_REMEMBERED);
  private readonly lastSent = new Map<string, number>();
  private sent = 0;

  /**
   * The items with their claims (or as they are, always when claim is false) for the next batch,
   * now counted as sent.
   */
  send(items: AppendItem[], claim = true): { batch: number; items: AppendItem[] | ClaimedItem[]; claimed: boolean } {
    const batch = ++this.sent;
    const sent = claim ? claimLinks(items, this.heads) : items;
    const claimed = sent !== items;
    for (const item of sent) {
      this.lastSent.set(item.tenant_id, batch);
      if (claimed) {
        const c = item as ClaimedItem;
        this.heads.set(c.tenant_id, { size: c.seq + 1, hash: c.chain_hash });
      } else this.heads.delete(item.tenant_id);
    }
    return { batch, items: sent, claimed };
  }

  /** What the database stored for a batch (an Error for a refused item), in the order sent. */
  answered(batch: number, sent: AppendItem[] | ClaimedItem[], claimed: boolean, results: (AppendResult | Error)[]): void {
    const stored = new Map<string, Head | null>();
    const off = new Set<string>();
    sent.forEach((item, i) => {
      const result = results[i];
      const c = item as Partial<ClaimedItem>;
      if (!claimed || result instanceof Error || result.seq !== c.seq || result.chain_hash !== c.chain_hash) off.add(item.tenant_id);
      if (result instanceof Error) {
        if (!stored.has(item.tenant_id)) stored.set(item.tenant_id, null);
        return;
      }
      const known = stored.get(item.tenant_id);
      if (!known || result.seq + 1 > known.size) stored.set(item.tenant_id, { size: result.seq + 1, hash: result.chain_hash });
    });
    for (const tenant of off) {
      const head = stored.get(tenant);
      if (this.lastSent.get(tenant) === batch && head) this.heads.set(tenant, head);
      else this.heads.delete(tenant);
    }
    for (const tenant of stored.keys()) if (this.lastSent.get(tenant) === batch) this.lastSent.delete(tenant);
  }

  /** A batch whose outcome is unknown (its call failed): nothing is known about any head. */
  lost(): void {
    this.heads.clear();
    this.lastSent.clear();
  }

  /** The head remembered for a tenant (tests). */
  get(tenant: string): Head | undefined {
    return this.heads.get(tenant);
  }
}

/** An item with the link its writer claims for it. */
export type ClaimedItem = AppendItem & { seq: number; prev_hash: string | null; chain_hash: string };

/**
 * The items as sent: each with the link it would take after the given heads (seq, prev_hash,
 * chain_hash), when every tenant of the batch has one; otherwise as they are, and the database
 * computes the links. A claim is only a proposal: receipt_append_batch() takes the
 * claims only when each tenant's first one continues its locked head, and the statement trigger
 * checks every stored link and recomputes every chain_hash (migration 010). Another instance
 * appending to the same tenant makes the claims stale, which costs the computation, nothing else.
 */
export function claimLinks(items: AppendItem[], heads: ReadonlyMap<string, Head>): AppendItem[] | ClaimedItem[] {
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

/** A stored item's answer (seq arrives as a bigint, in text from the PostgreSQL client). */
function resultOf(row: Omit<AppendResult, "seq"> & { seq: number | string | null }): AppendResult {
  return { seq: Number(row.seq), prev_hash: row.prev_hash, chain_hash: row.chain_hash, quota_limit: row.quota_limit, quota_used: row.quota_used };
}

async function appendBatch(db: Db, memo: HeadsMemo, items: AppendItem[]): Promise<(AppendResult | Error)[]> {
  const { batch, items: sent, claimed } = memo.send(items);
  let rows: Row[];
  try {
    rows = await db.pipeline.query<Row>(items.some((item) => item.key_epoch !== undefined) ? "receipts/append_batch_keyed" : "receipts/append_batch", [sent]);
  } catch (err) {
    // Committed or not, nothing is known about the heads now.
    memo.lost();
    throw err;
  }
  const byIndex = new Map(rows.map((r) => [r.idx, r]));
  const results = items.map((item, i): AppendResult | Error => {
    const row = byIndex.get(i);
    if (!row) return new Error("receipt_append_batch returned no row for an item");
    if (row.error_sqlstate) return new DbError(row.error_sqlstate, row.error_constraint ?? undefined, row.error_message ?? "", "receipts/append_batch");
    return resultOf(row);
  });
  memo.answered(batch, sent, claimed, results);
  return results;
}

/**
 * A batch of one item through receipt_append_item(), the per-item function the batch's careful
 * path uses: the same checks, trigger and commit without the set machinery, ~30-40% less time
 * for a lone append (docs/performance.md section 17). The database computes the link. A refusal
 * raised by the database is this item's answer (nothing was stored); any other failure leaves
 * the outcome unknown, as for a batch.
 */
async function appendOne(db: Db, memo: HeadsMemo, item: AppendItem): Promise<(AppendResult | Error)[]> {
  const { batch, items: sent } = memo.send([item], false);
  let result: AppendResult | Error;
  try {
    const [row] = await db.pipeline.query<AppendResult>(item.key_epoch !== undefined ? "receipts/append_one_keyed" : "receipts/append_one", [item]);
    result = row ? resultOf(row) : new Error("receipt_append_item returned no row");
  } catch (err) {
    if (!(err instanceof DbError)) {
      memo.lost();
      throw err;
    }
    result = err;
  }
  memo.answered(batch, sent, false, [result]);
  return [result];
}

export type AppendBatcher = Coalescer<AppendItem, AppendResult>;

/** The batcher of a database handle: `batcherFor(db).submit(item)` resolves after its batch committed. */
export const batcherFor = perDb((db: Db): AppendBatcher => {
  const memo = new HeadsMemo();
  return new Coalescer((items) => (items.length === 1 ? appendOne(db, memo, items[0]) : appendBatch(db, memo, items)), {
    maxBatch: MAX_BATCH,
    maxInFlight: db.offThread ? IN_FLIGHT_OFF_THREAD : 1,
    lingerMs: db.offThread ? 0 : LINGER_MS,
  });
});
