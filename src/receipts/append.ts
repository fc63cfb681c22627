// Storing a protect or execute decision as the tenant's next receipt. The payload is hashed and
// signed here; receipt_append() in the database (sql/schema) then checks the execute rules,
// storage and the daily quota, links the receipt into its tenant's chain and counts the call.
import { BoundedMap } from "../bounded-map.ts";
import { Coalescer } from "../db/coalescer.ts";
import { DbError, type Db, type QueryRow } from "../db/index.ts";
import { canonicalJson } from "../crypto/canonical.ts";
import { sha256HexSync } from "../crypto/sync.ts";
import { newId } from "../ids.ts";
import type { ResultPayload } from "../decide/payload.ts";
import { receiptClaims } from "./claims.ts";
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
  }

  /** The payload of an ALLOWED protect receipt of this tenant that this process stored lately, if any. */
  issuedProtect(tenantId: string, receiptId: string): ResultPayload | undefined {
    const issued = this.issued.get(receiptId);
    return issued?.tenantId === tenantId ? issued.payload : undefined;
  }

  async append(args: { tenantId: string; keyId: string; requestId: string; payload: ResultPayload; protectReceiptId?: string; approval?: OpenedApproval }): Promise<Appended> {
    const { tenantId, keyId, requestId, payload } = args;
    const kind = payload.kind as "protect" | "execute";
    const at = this.now();
    const timestamp = at.toISOString();
    const text = canonicalJson(payload);
    const content_hash = sha256HexSync(text);
    const receipt_id = newId("rcpt_");
    const protect_receipt_id = args.protectReceiptId ?? null;
    const claims = receiptClaims({ receipt_id, tenant_id: tenantId, key_id: keyId, kind, request_id: requestId, timestamp, content_hash, protect_receipt_id });
    const signature = await this.signer.sign(claims);
    const row = await this.batches.submit({
      receipt_id,
      tenant_id: tenantId,
      key_id: keyId,
      kind,
      request_id: requestId,
      timestamp,
      decision: payload.decision,
      payload: text,
      content_hash,
      signature,
      protect_receipt_id,
      approval: args.approval ?? null,
    });
    if (kind === "protect" && payload.decision === "ALLOWED") this.issued.set(receipt_id, { tenantId, payload });
    const receipt: DecisionReceiptView = {
      receipt_id,
      tenant_id: tenantId,
      kind,
      seq: Number(row.seq),
      prev_hash: row.prev_hash,
      chain_hash: row.chain_hash!,
      key_id: keyId,
      protect_receipt_id,
      decision: payload.decision,
      request_id: requestId,
      content_hash,
      timestamp,
      reasons: payload.reasons,
      payload,
      signature,
    };
    return { receipt, quota: { limit: row.quota_limit, used: row.quota_used ?? 0 }, at };
  }
}
