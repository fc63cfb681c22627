// Storing a protect or execute decision as the tenant's next receipt. The payload is hashed and
// signed here; receipt_append() in the database (sql/schema) then checks the execute rules,
// storage and the daily quota, links the receipt into its tenant's chain and counts the call.
import { BoundedMap } from "../bounded-map.ts";
import { Coalescer } from "../db/coalescer.ts";
import { DbError, type Db, type QueryRow } from "../db/index.ts";
import type { ResultPayload } from "../decide/payload.ts";
import type { UsageFacts, UsageNeed } from "../decide/engine.ts";
import { signReceipt, signReceiptNow } from "./sign.ts";
import { addDecimal } from "../decide/decimal.ts";
import type { ReceiptSigner } from "./signer.ts";
import type { Metrics } from "../observability/metrics.ts";
import { AppError } from "../http/errors.ts";
import type { DecisionReceiptView } from "./store.ts";

/** One decision as receipt_append() takes it. */
interface AppendItem {
  receipt_id: string;
  tenant_id: string;
  key_id: string;
  kind: "protect" | "execute";
  request_id: string;
  timestamp: string;
  decision: string;
  payload: string;
  content_hash: string;
  signature: string;
  protect_receipt_id: string | null;
  /** A protect that requires approval: the approval it opens (receipt_approval_open()). */
  approval: OpenedApproval | null;
  /**
   * A protect under usage rules: each counter its decision read, the total read, and what it adds
   * when stored ALLOWED (receipt_usage_rules(), receipt_usage_counters_add()).
   */
  usage: { counter: string; scope: string; window_start: string; before: number; add: number }[] | null;
}

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
 * A protect under a policy with usage rules (docs/policy.md, "Budgets and rate windows"). Its
 * receipt names the totals it decided on, and receipt_append() stores it only if they are the
 * counters under its tenant's locked log head (plus what the call's earlier items add): no
 * concurrent request, on any instance, can slip past a limit. The totals are what this process
 * knows of each counter (read once, then kept as its own decisions add to it); when they prove
 * stale again and again (another instance appends to the same counter), they are read under the
 * lock in the transaction that stores the decision.
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

/** The approval a protect under a require_approval rule opens, with its terms and what its emails name. */
export interface OpenedApproval {
  approval_id: string;
  quorum: number;
  roles: string[];
  expires_in: number;
  execute_within: number;
  rule: string;
  action: string;
}

/** receipt_append()'s answer for one item: its link and quota, or the refusal's SQLSTATE. */
type AppendRow = QueryRow<"receipts/append">;

/** The approval a retried protect answers instead of opening one (receipt_approval_answer()). */
export interface AnsweredApproval {
  approval_id: string;
  status: "pending" | "approved" | "denied" | "expired";
  expires_at: string;
  outcome_receipt_id: string | null;
}

export interface Appended {
  receipt: DecisionReceiptView;
  /** A protect under a require_approval rule that a retry made: the approval it answers. */
  answered?: AnsweredApproval;
  /** The daily quota this call counted against: limit null = unlimited. */
  quota: { limit: number | null; used: number };
  /** The receipt's time, also the instant the quota day and RateLimit-Reset refer to. */
  at: Date;
}

// Large enough to absorb a burst, small enough to keep one transaction short.
const MAX_BATCH = 200;
/** How long a batch waits for more while another is in flight, on the embedded database (ms). */
const LINGER_MS = 1;

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

/** receipt_append()'s approval column (JSON: parsed by one driver, text from another). */
function answeredApproval(value: unknown): AnsweredApproval | undefined {
  if (value === null || value === undefined) return undefined;
  const a = (typeof value === "string" ? JSON.parse(value) : value) as AnsweredApproval;
  return { approval_id: a.approval_id, status: a.status, expires_at: a.expires_at, outcome_receipt_id: a.outcome_receipt_id ?? null };
}

function counterRef(tenantId: string, n: { counter: string; scope: string; window_start: string }): CounterRef {
  return { tenant_id: tenantId, counter: n.counter, scope: n.scope, window_start: n.window_start };
}

/** A usage counter's key in ReceiptAppender's memory. */
function counterKey(tenantId: string, n: { counter: string; scope: string; window_start: string }): string {
  return `${tenantId}\u0000${n.counter}\u0000${n.scope}\u0000${n.window_start}`;
}

export class ReceiptAppender {
  /**
   * Group commit: appends that arrive while a batch is in the database wait for the next one,
   * which takes them all, so one round trip and one commit serve many requests. Batches go down
   * one pipelined session (Db.pipeline), the next one queued behind the one running. A caller is
   * answered only after its batch committed.
   */
  private readonly batches: Coalescer<AppendItem, AppendRow>;
  /** The same for protects with usage rules: read, decide, sign and append in one transaction per batch. */
  private readonly decided: Coalescer<UsageDecision, { row: AppendRow; item: AppendItem; payload: ResultPayload }>;
  /**
   * The ALLOWED protects this process stored lately, by receipt_id, for the execute that usually
   * follows within milliseconds. Freshness: stored receipts never change (receipts_append_only),
   * so an entry never goes stale; whether one may still be executed is receipt_append()'s check.
   */
  private readonly issued = new BoundedMap<string, { tenantId: string; payload: ResultPayload }>(1_024);
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

  constructor(
    db: Db,
    private readonly signer: ReceiptSigner,
    private readonly now: () => Date,
    metrics: Metrics,
  ) {
    this.batches = new Coalescer(
      async (items) => {
        metrics.receiptBatch(items.length);
        const rows = await db.pipeline.query("receipts/append", [items]);
        const byIndex = new Map(rows.map((r) => [r.idx, r]));
        return items.map((_, i) => {
          const row = byIndex.get(i);
          if (!row) return new Error("receipt_append returned no row for an item");
          return row.refusal ? new DbError(row.refusal, undefined, "receipt refused", "receipts/append") : row;
        });
      },
      // On the embedded database, whose one thread runs the calls one after another, a call sent
      // while another runs waits a moment for more: fewer, larger calls (+16-19% protect; on
      // PostgreSQL, which overlaps them, no gain: docs/performance.md).
      { maxBatch: MAX_BATCH, maxInFlight: 2, linger: db.kind === "embedded" ? LINGER_MS : 0 },
    );
    this.peeks = new Coalescer(
      async (refs) => {
        const rows = await db.pipeline.query("usage/peek", [refs]);
        return refs.map((_, i) => rows[i]?.exact ?? new Error("usage/peek returned no row for a counter"));
      },
      { maxBatch: 1_000, maxInFlight: 1 },
    );
    this.decided = new Coalescer(
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
          const rows = await q.query("receipts/append", [items]);
          const byIndex = new Map(rows.map((r) => [r.idx, r]));
          return batch.map((_, i) => {
            const row = byIndex.get(i);
            if (!row) return new Error("receipt_append returned no row for an item");
            return row.refusal ? new DbError(row.refusal, undefined, "receipt refused", "receipts/append") : { row, item: items[i], payload: payloads[i] };
          });
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
  async appendDecided(d: UsageDecision): Promise<Appended & { payload: ResultPayload }> {
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
        return this.stored(d, item, await this.batches.submit(item), payload);
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
        const { row, item, payload } = await this.decided.submit(d);
        return this.stored(d, item, row, payload);
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

  private stored(d: UsageDecision, item: AppendItem, row: AppendRow, payload: ResultPayload): Appended & { payload: ResultPayload } {
    if (payload.decision === "ALLOWED") this.issued.set(item.receipt_id, { tenantId: d.tenantId, payload });
    return { ...this.appended(item, row, payload), payload };
  }

  /** An item as receipt_append() takes it: the payload hashed and its claims signed. */
  private async signed(args: { tenantId: string; keyId: string; requestId: string; payload: ResultPayload; at: Date; protectReceiptId?: string; approval?: OpenedApproval }): Promise<AppendItem> {
    const receipt = await signReceipt((claims) => this.signer.sign(claims), {
      tenantId: args.tenantId,
      keyId: args.keyId,
      kind: args.payload.kind as "protect" | "execute",
      requestId: args.requestId,
      timestamp: args.at.toISOString(),
      payload: args.payload,
      protectReceiptId: args.protectReceiptId ?? null,
    });
    return { ...receipt, key_id: args.keyId, decision: args.payload.decision, approval: args.approval ?? null, usage: null };
  }

  private appended(item: AppendItem, row: AppendRow, payload: ResultPayload): Appended {
    const receipt: DecisionReceiptView = {
      receipt_id: item.receipt_id,
      tenant_id: item.tenant_id,
      kind: item.kind,
      seq: Number(row.seq),
      prev_hash: row.prev_hash,
      chain_hash: row.chain_hash!,
      key_id: item.key_id,
      protect_receipt_id: item.protect_receipt_id,
      decision: payload.decision,
      request_id: item.request_id,
      content_hash: item.content_hash,
      timestamp: item.timestamp,
      reasons: payload.reasons,
      payload,
      signature: item.signature,
    };
    const answered = answeredApproval(row.approval);
    return { receipt, quota: { limit: row.quota_limit, used: row.quota_used ?? 0 }, at: new Date(item.timestamp), ...(answered && { answered }) };
  }

  /** The payload of an ALLOWED protect receipt of this tenant that this process stored lately, if any. */
  issuedProtect(tenantId: string, receiptId: string): ResultPayload | undefined {
    const issued = this.issued.get(receiptId);
    return issued?.tenantId === tenantId ? issued.payload : undefined;
  }

  async append(args: { tenantId: string; keyId: string; requestId: string; payload: ResultPayload; protectReceiptId?: string; approval?: OpenedApproval }): Promise<Appended> {
    const item = await this.signed({ ...args, at: this.now() });
    const row = await this.batches.submit(item);
    if (item.kind === "protect" && args.payload.decision === "ALLOWED") this.issued.set(item.receipt_id, { tenantId: args.tenantId, payload: args.payload });
    return this.appended(item, row, args.payload);
  }

}
