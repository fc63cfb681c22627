// Storing a protect or execute decision as the tenant's next receipt. The payload is hashed and
// signed here; receipt_append_batch() in the database (through the group-commit batcher) then
// checks the plan's quotas, assigns seq and chain_hash under the tenant's head lock and counts the
// call, in the same transaction as every other append of its batch.
import { BoundedMap } from "../bounded-map.ts";
import { perDb } from "../db/coalescer.ts";
import type { Db } from "../db/index.ts";
import type { Deps } from "../http/deps.ts";
import type { KeyHint } from "../keys/authenticate.ts";
import { newId } from "../ids.ts";
import type { ResultPayload } from "../simulation/payload.ts";
import { canonicalJson } from "./canonical.ts";
import { batcherFor } from "./batcher.ts";
import { sha256HexSync } from "./fast-crypto.ts";
import type { ReceiptView } from "./store.ts";

export interface Appended {
  receipt: ReceiptView;
  /** The daily quota this call counted against: limit null = unlimited. */
  quota: { limit: number | null; used: number };
  /** The receipt's time, also the instant the quota day and RateLimit-Reset refer to. */
  at: Date;
}

/**
 * The ALLOWED protect decisions this process stored lately, by receipt_id: what an execute of one
 * of them needs (its tenant and payload), without reading the receipt back. Stored receipts never
 * change (receipts_append_only), so an entry cannot go stale; whether the receipt may still be
 * executed (its age, once only) is the append's check, as for a receipt read from the database.
 * Small: an execute usually follows its protect within milliseconds, and a miss only costs the read.
 */
const issuedFor = perDb((_db: Db) => new BoundedMap<string, { tenantId: string; payload: ResultPayload }>(1_024));

/** The payload of an ALLOWED protect receipt of this tenant that this process stored lately, if any. */
export function issuedProtect(db: Db, tenantId: string, receiptId: string): ResultPayload | undefined {
  const issued = issuedFor(db).get(receiptId);
  return issued?.tenantId === tenantId ? issued.payload : undefined;
}

export async function appendReceipt(
  deps: Deps,
  args: { tenantId: string; keyId: string; requestId: string; payload: ResultPayload; protectReceiptId?: string; hint?: KeyHint },
): Promise<Appended> {
  const { tenantId, keyId, requestId, payload } = args;
  const at = deps.now();
  const timestamp = at.toISOString();
  const text = canonicalJson(payload);
  const content_hash = sha256HexSync(text);
  const signature = await deps.signer.sign({ content_hash, request_id: requestId, tenant_id: tenantId, timestamp, kind: payload.kind });
  const receipt_id = newId("rcpt_");
  const row = await batcherFor(deps.db).submit({
    receipt_id,
    tenant_id: tenantId,
    key_id: keyId,
    kind: payload.kind,
    request_id: requestId,
    timestamp,
    decision: payload.decision,
    payload: text,
    content_hash,
    signature,
    protect_receipt_id: args.protectReceiptId ?? null,
    // A hinted key is checked by the transaction that stores the receipt (WR006 when stale).
    ...(args.hint && { key_epoch: args.hint.key_epoch }),
  });
  if (!row) throw new Error("receipt_append returned no row");
  if (args.hint) args.hint.confirmed = true;
  if (payload.kind === "protect" && payload.decision === "ALLOWED") issuedFor(deps.db).set(receipt_id, { tenantId, payload });
  const receipt: ReceiptView = {
    receipt_id,
    tenant_id: tenantId,
    kind: payload.kind as "protect" | "execute",
    seq: Number(row.seq),
    prev_hash: row.prev_hash,
    chain_hash: row.chain_hash,
    key_id: keyId,
    protect_receipt_id: args.protectReceiptId ?? null,
    decision: payload.decision,
    request_id: requestId,
    content_hash,
    timestamp,
    reasons: payload.reasons,
    payload,
    signature,
  };
  return { receipt, quota: { limit: row.quota_limit, used: row.quota_used }, at };
}
