// Storing a protect or execute decision as the tenant's next receipt. The payload is hashed and
// signed here; receipt_append() in the database (sql/schema) then checks the execute rules,
// storage and the daily quota, links the receipt into its tenant's chain and counts the call.
import { BoundedMap } from "../bounded-map.ts";
import { Coalescer } from "../db/coalescer.ts";
import { DbError, type Db, type QueryRow } from "../db/index.ts";
import type { ResultPayload } from "../decide/payload.ts";
import type { UsageFacts, UsageNeed } from "../decide/engine.ts";
import type { ReceiptClaims } from "./claims.ts";
import { signReceipt } from "./sign.ts";
import type { ReceiptSigner } from "./signer.ts";
import type { Metrics } from "../observability/metrics.ts";
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
  /** An ALLOWED protect under usage rules: what it adds to their counters (receipt_usage_counters_add()). */
  usage_add: { counter: string; scope: string; window_start: string; add: number }[] | null;
}

/**
 * A protect under a policy with usage rules (docs/policy.md, "Budgets and rate windows"): decided
 * only once its counters are read under its tenant's locked log head, in the transaction that
 * stores it, so that no concurrent request, on any instance, can slip past a limit.
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

export interface Appended {
  receipt: DecisionReceiptView;
  /** The daily quota this call counted against: limit null = unlimited. */
  quota: { limit: number | null; used: number };
  /** The receipt's time, also the instant the quota day and RateLimit-Reset refer to. */
  at: Date;
}

// Large enough to absorb a burst, small enough to keep one transaction short.
const MAX_BATCH = 200;

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
      { maxBatch: MAX_BATCH, maxInFlight: 2 },
    );
    this.decided = new Coalescer(
      async (batch) => {
        // The signing key loaded first: inside the transaction items are signed with signHeld(), which
        // reads nothing (on the embedded database a read would wait for the transaction's end).
        await this.signer.ready();
        return db.tx(async (q) => {
          metrics.receiptBatch(batch.length);
          const key = (tenant: string, n: UsageNeed) => `${tenant}\u0000${n.counter}\u0000${n.scope}\u0000${n.window_start}`;
          const asked = new Map<string, { tenant_id: string; counter: string; scope: string; window_start: string }>();
          for (const d of batch) for (const n of d.needs) asked.set(key(d.tenantId, n), { tenant_id: d.tenantId, counter: n.counter, scope: n.scope, window_start: n.window_start });
          const tenants = [...new Set(batch.map((d) => d.tenantId))].sort();
          const totals = new Map<string, number>();
          for (const r of await q.query("usage/read", [tenants, [...asked.values()]])) totals.set(`${r.tenant_id}\u0000${r.counter}\u0000${r.scope}\u0000${new Date(r.window_start).toISOString()}`, r.total);
          // In input order, each decision sees the ones before it in the batch.
          const items: AppendItem[] = [];
          const payloads: ResultPayload[] = [];
          for (const d of batch) {
            const facts = new Map(d.needs.map((n) => [n.rule, { window_start: n.window_start, before: totals.get(key(d.tenantId, n)) ?? 0 }]));
            const { payload, approval } = d.make(facts);
            const allowed = payload.decision === "ALLOWED";
            if (allowed) for (const n of d.needs) totals.set(key(d.tenantId, n), (totals.get(key(d.tenantId, n)) ?? 0) + n.add);
            items.push({
              ...(await this.signed({ tenantId: d.tenantId, keyId: d.keyId, requestId: d.requestId, payload, at: d.at, approval }, true)),
              usage_add: allowed ? d.needs.map((n) => ({ counter: n.counter, scope: n.scope, window_start: n.window_start, add: n.add })) : null,
            });
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

  /** A protect decided on usage counters read under its tenant's lock (see UsageDecision). */
  async appendDecided(d: UsageDecision): Promise<Appended & { payload: ResultPayload }> {
    const { row, item, payload } = await this.decided.submit(d);
    if (payload.decision === "ALLOWED") this.issued.set(item.receipt_id, { tenantId: d.tenantId, payload });
    return { ...this.appended(item, row, payload), payload };
  }

  /** An item as receipt_append() takes it: the payload hashed and its claims signed. */
  private async signed(args: { tenantId: string; keyId: string; requestId: string; payload: ResultPayload; at: Date; protectReceiptId?: string; approval?: OpenedApproval }, inTransaction = false): Promise<AppendItem> {
    const sign = (claims: ReceiptClaims) => (inTransaction ? this.signer.signHeld(claims) : this.signer.sign(claims));
    const receipt = await signReceipt(sign, {
      tenantId: args.tenantId,
      keyId: args.keyId,
      kind: args.payload.kind as "protect" | "execute",
      requestId: args.requestId,
      timestamp: args.at.toISOString(),
      payload: args.payload,
      protectReceiptId: args.protectReceiptId ?? null,
    });
    return { ...receipt, key_id: args.keyId, decision: args.payload.decision, approval: args.approval ?? null, usage_add: null };
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
    return { receipt, quota: { limit: row.quota_limit, used: row.quota_used ?? 0 }, at: new Date(item.timestamp) };
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
