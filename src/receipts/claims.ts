// The receipt claims (docs/api.md, POST /v1/simulate): what every result's signature covers and, with prev
// and seq, what a stored receipt's chain_hash covers. Every verifier rebuilds them from the
// result's own top-level fields, so changing any one field of a saved result breaks the check.
// An audit event (docs/api.md, "The audit trail") is a stored receipt like a decision, signed by
// the service for no key: receipt_id set, key_id and protect_receipt_id null. An approval's vote
// (a member's, no key) and its outcome (the key that asked) name the approval's protect receipt
// (docs/api.md, "Approvals").
export type ReceiptKind = "simulation" | "protect" | "execute" | "event" | "vote" | "approval";

export interface ReceiptClaims {
  v: 2;
  /** null for a simulation (never stored). */
  receipt_id: string | null;
  tenant_id: string;
  /** null when a session (JWT), not an API key, asked, and for an event. */
  key_id: string | null;
  kind: ReceiptKind;
  request_id: string;
  timestamp: string;
  content_hash: string;
  /** The executed receipt (execute), or the approval's protect receipt (vote, approval); null otherwise. */
  protect_receipt_id: string | null;
}

/** Exactly the claims, nothing else of fields: a stray field must not enter what is signed. */
export function receiptClaims(fields: Omit<ReceiptClaims, "v">): ReceiptClaims {
  const { receipt_id, tenant_id, key_id, kind, request_id, timestamp, content_hash, protect_receipt_id } = fields;
  return { v: 2, receipt_id, tenant_id, key_id, kind, request_id, timestamp, content_hash, protect_receipt_id };
}

const KINDS: readonly unknown[] = ["simulation", "protect", "execute", "event", "vote", "approval"];
const stringOrNull = (v: unknown): v is string | null => v === null || typeof v === "string";

/**
 * The claims a result shows at its top level, or undefined when one is missing, of the wrong
 * type, or contradicts its kind (a stored receipt id on a simulation, an execute naming no protect,
 * an event naming a key).
 */
export function claimsShown(result: Record<string, unknown>): ReceiptClaims | undefined {
  const { receipt_id, tenant_id, key_id, kind, request_id, timestamp, content_hash, protect_receipt_id } = result;
  if (typeof tenant_id !== "string" || typeof request_id !== "string" || typeof timestamp !== "string" || typeof content_hash !== "string") return undefined;
  if (!stringOrNull(receipt_id) || !stringOrNull(key_id) || !stringOrNull(protect_receipt_id) || !KINDS.includes(kind)) return undefined;
  const namesProtect = kind === "execute" || kind === "vote" || kind === "approval";
  if ((kind === "simulation") !== (receipt_id === null) || namesProtect !== (protect_receipt_id !== null)) return undefined;
  if ((kind === "event" || kind === "vote") && key_id !== null) return undefined;
  return receiptClaims({ receipt_id, tenant_id, key_id, kind: kind as ReceiptKind, request_id, timestamp, content_hash, protect_receipt_id });
}
