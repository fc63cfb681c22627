// POST /v1/verify: every check a careful client would make of a result, reported one by one.
// The body comes from outside, so any shape is possible and nothing here may throw.
import type { Queryable } from "../db/index.ts";
import { policyByRef } from "../policies/store.ts";
import { canonicalJson } from "../crypto/canonical.ts";
import { getReceiptRow } from "../receipts/store.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";
import { verifyResult } from "../receipts/verify.ts";
import { decideAgain } from "../decide/again.ts";

type Fields = Record<string, unknown>;
const isObject = (v: unknown): v is Fields => v !== null && typeof v === "object" && !Array.isArray(v);

export interface VerifyChecks {
  content_hash: boolean;
  signature: boolean;
  decision: boolean;
  stored: boolean;
}

export async function verifyReceipt(deps: { db: Queryable; signer: ReceiptSigner }, tenantId: string, receipt: unknown): Promise<{ verified: boolean; checks: VerifyChecks }> {
  const offline = await verifyResult(receipt, await deps.signer.jwks());
  const checks: VerifyChecks = {
    ...offline.checks,
    decision: await safely(() => decisionHolds(deps.db, tenantId, receipt)),
    stored: await safely(() => storedUnchanged(deps.db, tenantId, receipt)),
  };
  // Simulations are never stored; for them the other three checks decide.
  const simulation = isObject(receipt) && isObject(receipt.payload) && receipt.payload.kind === "simulation";
  const verified = checks.content_hash && checks.signature && checks.decision && (checks.stored || simulation);
  return { verified, checks };
}

async function safely(check: () => Promise<boolean>): Promise<boolean> {
  try {
    return await check();
  } catch {
    return false;
  }
}

// Re-runs the pure decision under the exact policy version the payload names (of this tenant,
// or the built-in default): the recorded decision, reasons and rule must come out again. An audit
// event decides nothing: it holds when neither the receipt nor its payload claims a decision.
async function decisionHolds(db: Queryable, tenantId: string, receipt: unknown): Promise<boolean> {
  if (!isObject(receipt) || !isObject(receipt.payload)) return false;
  if (receipt.kind === "event" || receipt.payload.kind === "event") {
    return receipt.kind === "event" && receipt.payload.kind === "event" && receipt.decision === null && !("decision" in receipt.payload);
  }
  // A vote decides nothing; an approval's outcome says ALLOWED exactly when it approved.
  if (receipt.kind === "vote" || receipt.payload.kind === "vote") {
    return receipt.kind === "vote" && receipt.payload.kind === "vote" && receipt.decision === null && !("decision" in receipt.payload);
  }
  if (receipt.kind === "approval" || receipt.payload.kind === "approval") {
    const outcome = receipt.payload.outcome;
    return (
      receipt.kind === "approval" && receipt.payload.kind === "approval" && isObject(outcome) && receipt.decision === receipt.payload.decision &&
      (receipt.decision === "ALLOWED") === (outcome.status === "approved")
    );
  }
  const { policy, decision } = receipt.payload;
  if (!isObject(policy)) return false;
  const { policy_id, version, hash } = policy;
  if (typeof policy_id !== "string" || typeof version !== "number" || typeof hash !== "string") return false;
  const document = await policyByRef(db, tenantId, { policy_id, version, hash });
  if (!document) return false;
  const again = decideAgain(receipt.payload, document);
  if (!again?.matches) return false;
  // An execute of an approved action names the approval, whose stored outcome must be this
  // tenant's ALLOWED one: then, and only then, ALLOWED holds.
  let expected = again.decision;
  const outcome = receipt.payload.outcome;
  if (outcome !== undefined) {
    if (receipt.payload.kind !== "execute" || !again.heldForApproval || !isObject(outcome) || typeof outcome.receipt_id !== "string") return false;
    const stored = await getReceiptRow(db, tenantId, outcome.receipt_id);
    if (stored?.kind !== "approval" || stored.decision !== "ALLOWED" || receipt.protect_receipt_id !== outcome.receipt_id) return false;
    expected = "ALLOWED";
  }
  return expected === decision && receipt.decision === decision;
}

// The receipt is this tenant's and every field it shows is what the log holds.
async function storedUnchanged(db: Queryable, tenantId: string, receipt: unknown): Promise<boolean> {
  if (!isObject(receipt) || typeof receipt.receipt_id !== "string" || !/^rcpt_[0-9A-Za-z]{22}$/.test(receipt.receipt_id)) return false;
  const row = await getReceiptRow(db, tenantId, receipt.receipt_id);
  if (!row) return false;
  const required: Fields = {
    seq: row.seq,
    chain_hash: row.chain_hash,
    decision: row.decision,
    request_id: row.request_id,
    content_hash: row.content_hash,
    timestamp: row.timestamp,
    signature: row.signature,
  };
  const optional: Fields = { tenant_id: row.tenant_id, kind: row.kind, prev_hash: row.prev_hash, key_id: row.key_id, protect_receipt_id: row.protect_receipt_id };
  for (const [name, value] of Object.entries(required)) if (receipt[name] !== value) return false;
  for (const [name, value] of Object.entries(optional)) if (name in receipt && receipt[name] !== value) return false;
  return canonicalJson(receipt.payload) === row.payload;
}
