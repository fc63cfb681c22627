// Protects under usage rules (docs/policy.md, "Budgets and rate windows"): each decided on the
// totals of its counters, then appended by the receipt appender (src/receipts/append.ts), whose
// receipt_append() stores it only if those totals are the stored ones.
import { BoundedMap } from "../bounded-map.ts";
import { Coalescer } from "../db/coalescer.ts";
import { DbError, type Db } from "../db/index.ts";
import { addDecimal } from "../decide/decimal.ts";
import type { UsageFacts } from "../decide/engine.ts";
import type { UsageNeed } from "../decide/usage-needs.ts";
import type { ResultPayload } from "../decide/payload.ts";
import { AppError } from "../http/errors.ts";
import type { Metrics } from "../observability/metrics.ts";
import { appendItems, MAX_BATCH, type AppendItem, type Appended, type AppendRow, type OpenedApproval, type ReceiptAppender } from "../receipts/append.ts";
import { signReceipt, signReceiptNow } from "../receipts/sign.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";

/** A usage counter: its tenant, rule's counter, scope and window. */
interface CounterRef {
  tenant_id: string;
  counter: string;
  scope: string;
  window_start: string;
}

/** receipt_append()'s refusal of a decision whose usage totals were not the stored ones: decided again. */
const USAGE_STALE = "WB002";
/** Decisions on the totals this process knows, before one on totals read under the lock. */
const KNOWN_ATTEMPTS = 3;
/** Decisions on totals read under the lock, before the request fails (503). */
const LOCKED_ATTEMPTS = 3;

/**
 * A protect under a policy with usage rules. Its receipt names the totals it decided on, and
 * receipt_append() stores it only if they are the counters under its tenant's locked log head
 * (plus what the call's earlier items add): no concurrent request, on any instance, can slip past
 * a limit. The totals are what this process knows of each counter (read once, then kept as its
 * own decisions add to it); when they prove stale again and again (another instance appends to
 * the same counter), they are read under the lock in the transaction that stores the decision.
 */
export interface UsageDecision {
  tenantId: string;
  keyId: string;
  requestId: string;
  /** The receipt's time, which the usage windows of `needs` were computed for. */
  at: Date;
  needs: UsageNeed[];
  /** The payload (and the approval it opens, if any) decided with the totals read. */
  make: (facts: UsageFacts) => { payload: ResultPayload; approval?: OpenedApproval };
}

/** `d` decided on these totals (exact decimal text, one per need): the payload, what to sign, and the item's other fields. */
function decideOn(d: UsageDecision, read: string[]) {
  const before = read.map(Number);
  const { payload, approval } = d.make(new Map(d.needs.map((n, i) => [n.rule, { window_start: n.window_start, before: before[i] }])));
  return {
    payload,
    receipt: { tenantId: d.tenantId, keyId: d.keyId, kind: "protect" as const, requestId: d.requestId, timestamp: d.at.toISOString(), payload, protectReceiptId: null },
    fields: {
      key_id: d.keyId,
      decision: payload.decision,
      approval: approval ?? null,
      usage: d.needs.map((n, i) => ({ counter: n.counter, scope: n.scope, window_start: n.window_start, before: before[i], add: n.add })),
    },
  };
}

function counterRef(tenantId: string, n: { counter: string; scope: string; window_start: string }): CounterRef {
  return { tenant_id: tenantId, counter: n.counter, scope: n.scope, window_start: n.window_start };
}

/** A usage counter's key in UsageLimits' memory. */
function counterKey(tenantId: string, n: { counter: string; scope: string; window_start: string }): string {
  return `${tenantId}\u0000${n.counter}\u0000${n.scope}\u0000${n.window_start}`;
}

export class UsageLimits {
  /**
   * Usage counters as this process knows them, exact (decimal text), by counterKey(): read once
   * (usage/peek), then what its own decisions add when ALLOWED. Freshness: an entry may be stale
   * (another instance appended, or a decision counted here was refused); receipt_append() then
   * refuses the decision made on it (WB002), and the entry goes, to be read again.
   */
  private readonly counters = new BoundedMap<string, string>(10_000);
  /**
   * Decisions on each counter sent to the append and not yet answered. A counter is read only on
   * the session the appends go down, after them; it is kept only if none was in flight when its
   * total came back, so that the total includes all of them.
   */
  private readonly unanswered = new Map<string, number>();
  private readonly peeks: Coalescer<CounterRef, string>;
  /** Decisions whose known totals kept proving stale: read, decide, sign and append in one transaction per batch. */
  private readonly locked: Coalescer<UsageDecision, { row: AppendRow; item: AppendItem; payload: ResultPayload }>;

  constructor(
    db: Db,
    private readonly receipts: ReceiptAppender,
    private readonly signer: ReceiptSigner,
    metrics: Metrics,
  ) {
    this.peeks = new Coalescer(
      async (refs) => {
        const rows = await db.pipeline.query("usage/peek", [refs]);
        return refs.map((_, i) => rows[i]?.exact ?? new Error("usage/peek returned no row for a counter"));
      },
      { maxBatch: 1_000, maxInFlight: 1 },
    );
    this.locked = new Coalescer(
      async (batch) => {
        // The signing key loaded first: inside the transaction items are signed with signHeld(), which
        // reads nothing (on the embedded database a read would wait for the transaction's end).
        await this.signer.ready();
        return db.tx(async (q) => {
          metrics.receiptBatch(batch.length);
          const asked = new Map<string, CounterRef>();
          for (const d of batch) for (const n of d.needs) asked.set(counterKey(d.tenantId, n), counterRef(d.tenantId, n));
          const tenants = [...new Set(batch.map((d) => d.tenantId))].sort();
          const totals = new Map<string, string>();
          for (const r of await q.query("usage/read", [tenants, [...asked.values()]])) totals.set(counterKey(r.tenant_id, { ...r, window_start: new Date(r.window_start).toISOString() }), r.exact);
          // In input order, each decision sees the ones before it in the batch.
          const items: AppendItem[] = [];
          const payloads: ResultPayload[] = [];
          for (const d of batch) {
            const read = d.needs.map((n) => totals.get(counterKey(d.tenantId, n)) ?? "0");
            const { payload, receipt, fields } = decideOn(d, read);
            if (payload.decision === "ALLOWED") d.needs.forEach((n, i) => totals.set(counterKey(d.tenantId, n), addDecimal(read[i], n.add)));
            items.push({ ...(await signReceipt((claims) => this.signer.signHeld(claims), receipt)), ...fields });
            payloads.push(payload);
          }
          const rows = await appendItems(q, items);
          return rows.map((row, i) => (row instanceof Error ? row : { row, item: items[i], payload: payloads[i] }));
        });
      },
      { maxBatch: MAX_BATCH, maxInFlight: 1 },
    );
  }

  /**
   * A protect under usage rules (see UsageDecision): decided at once on the totals this process
   * knows and appended with the other decisions; read under the lock only when those keep
   * proving stale.
   */
  async append(d: UsageDecision): Promise<Appended & { payload: ResultPayload }> {
    const keys = d.needs.map((n) => counterKey(d.tenantId, n));
    for (let attempt = 1; attempt <= KNOWN_ATTEMPTS; attempt++) {
      await this.signer.ready();
      await this.learn(d, keys);
      const read = keys.map((k) => this.counters.get(k));
      if (!read.every((total) => total !== undefined)) continue;
      // From here to the submit nothing awaits: the decisions on a counter reach the append in
      // the order in which each counted on the ones before it.
      const { payload, receipt, fields } = decideOn(d, read);
      if (payload.decision === "ALLOWED") d.needs.forEach((n, i) => this.counters.set(keys[i], addDecimal(read[i], n.add)));
      const item: AppendItem = { ...signReceiptNow((claims) => this.signer.signNow(claims), receipt), ...fields };
      for (const key of keys) this.unanswered.set(key, (this.unanswered.get(key) ?? 0) + 1);
      try {
        return { ...(await this.receipts.appendSigned(item, payload)), payload };
      } catch (err) {
        // Whatever refused it, what the counters were thought to hold is not sure any more.
        for (const key of keys) this.counters.delete(key);
        if (!(err instanceof DbError && err.sqlstate === USAGE_STALE)) throw err;
      } finally {
        for (const key of keys) {
          const left = this.unanswered.get(key)! - 1;
          if (left === 0) this.unanswered.delete(key);
          else this.unanswered.set(key, left);
        }
      }
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const { row, item, payload } = await this.locked.submit(d);
        return { ...this.receipts.stored(item, row, payload), payload };
      } catch (err) {
        // Stale under the lock only when an earlier item of the same call was refused: decided again.
        if (!(err instanceof DbError && err.sqlstate === USAGE_STALE)) throw err;
        if (attempt === LOCKED_ATTEMPTS) throw new AppError("unavailable", undefined, { headers: { "retry-after": "1" }, fields: { retry_after: 1 } });
      }
    }
  }

  /** Reads the counters of `d` that this process does not know, and keeps those that no decision in flight may have moved. */
  private async learn(d: UsageDecision, keys: string[]): Promise<void> {
    const missing = d.needs.flatMap((n, i) => (this.counters.has(keys[i]) ? [] : [{ key: keys[i], ref: counterRef(d.tenantId, n) }]));
    if (missing.length === 0) return;
    const totals = await Promise.all(missing.map((m) => this.peeks.submit(m.ref)));
    missing.forEach((m, i) => {
      if (!this.counters.has(m.key) && !this.unanswered.has(m.key)) this.counters.set(m.key, totals[i]);
    });
  }
}
