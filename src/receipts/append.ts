// Storing a protect or execute decision as the tenant's next receipt. The payload is hashed and
// signed here; receipt_append() in the database (sql/schema) then checks the execute rules,
// storage, the daily quota and the usage totals an item names, links the receipt into its
// tenant's chain and counts the call. A protect under usage rules is decided on its counters by
// src/usage/limits.ts, which hands the signed item here.
import { BoundedMap } from "../bounded-map.ts";
import { Coalescer } from "../db/coalescer.ts";
import { DbError, type Db, type Queryable, type QueryRow } from "../db/index.ts";
import type { ResultPayload } from "../decide/payload.ts";
import { signReceipt } from "./sign.ts";
import type { ReceiptSigner } from "./signer.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { DecisionReceiptView } from "./store.ts";

/** One decision as receipt_append() takes it. */
export interface AppendItem {
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
export type AppendRow = QueryRow<"receipts/append">;

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
export const MAX_BATCH = 200;
/** How long a batch waits for more while another is in flight, on the embedded database (ms). */
const LINGER_MS = 1;

/** receipt_append()'s approval column (JSON: parsed by one driver, text from another). */
function answeredApproval(value: unknown): AnsweredApproval | undefined {
  if (value === null || value === undefined) return undefined;
  const a = (typeof value === "string" ? JSON.parse(value) : value) as AnsweredApproval;
  return { approval_id: a.approval_id, status: a.status, expires_at: a.expires_at, outcome_receipt_id: a.outcome_receipt_id ?? null };
}

/**
 * One receipt_append() call on `q` (a session or a transaction): each item's row, or its refusal as a
 * DbError. With `tenantId`, every item is that tenant's, and the call names it (receipt_append_tenant():
 * on a Citus cluster it runs whole on the tenant's worker).
 */
export async function appendItems(q: Queryable, items: AppendItem[], tenantId?: string): Promise<(AppendRow | Error)[]> {
  const rows = tenantId === undefined ? await q.query("receipts/append", [items]) : await q.query("receipts/append_tenant", [tenantId, items]);
  const byIndex = new Map(rows.map((r) => [r.idx, r]));
  return items.map((_, i) => {
    const row = byIndex.get(i);
    if (!row) return new Error("receipt_append returned no row for an item");
    return row.refusal ? new DbError(row.refusal, undefined, "receipt refused", "receipts/append") : row;
  });
}

/**
 * Items waiting for their batch, always in one call together and in this order (a protect and its
 * execute), and whether their call may run on their tenant's worker of a cluster.
 */
interface Waiting {
  items: AppendItem[];
  /**
   * False when storing one writes the coordinator's outbox (the mail and webhook events of an approval
   * it opens or an outcome it executes: receipt_approval_open(), receipt_approval_executed()).
   */
  onWorker: boolean;
}

/** One call for the batch's groups of items; each group's answers, in its order. */
async function appendGroups(q: Queryable, groups: Waiting[], tenantId?: string): Promise<(AppendRow | Error)[][]> {
  const answers = await appendItems(q, groups.flatMap((g) => g.items), tenantId);
  let at = 0;
  return groups.map((g) => answers.slice(at, (at += g.items.length)));
}

/** An item may run on its tenant's worker unless storing it writes the coordinator's outbox (Waiting). */
const onWorker = (item: AppendItem, payload: ResultPayload) => item.approval === null && payload.outcome === undefined;

/** How many one-tenant batches a cluster's appender keeps in flight, over the pool (docs/scaling.md). */
const CLUSTER_IN_FLIGHT = 4;

export class ReceiptAppender {
  /**
   * Group commit: appends that arrive while a batch is in the database wait for the next one,
   * which takes them all, so one round trip and one commit serve many requests. On one server a
   * batch holds any tenants' items and batches go down one pipelined session (Db.pipeline), the next
   * one queued behind the one running. On a Citus cluster (`citus`) a batch holds one tenant's items,
   * so that its transaction is one shard's, and runs on that tenant's worker when it may (Waiting);
   * batches of different tenants run side by side over the pool. A caller is answered only after its
   * batch committed.
   */
  private readonly batches: Coalescer<Waiting, (AppendRow | Error)[]>;
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
    opts: { citus?: boolean } = {},
  ) {
    this.batches = opts.citus
      ? new Coalescer(
          async (waiting) => {
            metrics.receiptBatch(waiting.reduce((n, w) => n + w.items.length, 0));
            const first = waiting[0]!;
            return appendGroups(db, waiting, first.onWorker ? first.items[0]!.tenant_id : undefined);
          },
          { maxBatch: MAX_BATCH, maxInFlight: CLUSTER_IN_FLIGHT, key: (w) => `${w.onWorker ? "worker" : "coordinator"} ${w.items[0]!.tenant_id}` },
        )
      : new Coalescer(
          async (waiting) => {
            metrics.receiptBatch(waiting.reduce((n, w) => n + w.items.length, 0));
            return appendGroups(db.pipeline, waiting);
          },
          // On the embedded database, whose one thread runs the calls one after another, a call sent
          // while another runs waits a moment for more: fewer, larger calls (+16-19% protect; on
          // PostgreSQL, which overlaps them, no gain: docs/performance.md).
          { maxBatch: MAX_BATCH, maxInFlight: 2, linger: db.kind === "embedded" ? LINGER_MS : 0 },
        );
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

  /**
   * The answer for an item receipt_append() stored (in a batch here, or in a caller's own
   * transaction through appendItems()); an ALLOWED protect is kept for its execute.
   */
  stored(item: AppendItem, row: AppendRow, payload: ResultPayload): Appended {
    if (item.kind === "protect" && payload.decision === "ALLOWED") this.issued.set(item.receipt_id, { tenantId: item.tenant_id, payload });
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

  /** A signed item (`payload` is the one its content_hash covers) joins the next batch. */
  async appendSigned(item: AppendItem, payload: ResultPayload): Promise<Appended> {
    const [row] = await this.batches.submit({ items: [item], onWorker: onWorker(item, payload) });
    if (row instanceof Error) throw row;
    return this.stored(item, row!, payload);
  }

  async append(args: { tenantId: string; keyId: string; requestId: string; payload: ResultPayload; protectReceiptId?: string; approval?: OpenedApproval }): Promise<Appended> {
    return this.appendSigned(await this.signed({ ...args, at: this.now() }), args.payload);
  }

  /**
   * An ALLOWED protect (no approval) and its execute, in one call to receipt_append(), which takes
   * an execute of a protect earlier in the same call and holds it to that protect's fate: one
   * round trip and one commit for both. Throws the protect's refusal (the execute is then refused
   * too); answers the execute's refusal as an Error beside the stored protect.
   */
  async appendWithExecute(args: { tenantId: string; keyId: string; requestId: string; payload: ResultPayload; execute: ResultPayload }): Promise<[Appended, Appended | Error]> {
    const asked = await this.signed({ ...args, at: this.now() });
    const done = await this.signed({ ...args, payload: args.execute, protectReceiptId: asked.receipt_id, at: this.now() });
    const [protectRow, executeRow] = await this.batches.submit({ items: [asked, done], onWorker: onWorker(asked, args.payload) && onWorker(done, args.execute) });
    if (protectRow instanceof Error) throw protectRow;
    const stored = this.stored(asked, protectRow!, args.payload);
    return [stored, executeRow instanceof Error ? executeRow : this.stored(done, executeRow!, args.execute)];
  }
}
