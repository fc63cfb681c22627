// The signed core of every stored receipt (a decision, an audit event, an approval's vote or
// outcome): a new receipt id, the payload's JCS text and its SHA-256 (content_hash), and the nine
// claims signed. Each writer adds what its append takes (the decision, the approval it opens).
import { canonicalJson } from "../crypto/canonical.ts";
import { sha256HexSync } from "../crypto/sync.ts";
import { newId } from "../ids.ts";
import { receiptClaims, type ReceiptClaims, type ReceiptKind } from "./claims.ts";

export interface SignedReceipt<K extends ReceiptKind> {
  receipt_id: string;
  tenant_id: string;
  key_id: string | null;
  kind: K;
  request_id: string;
  timestamp: string;
  /** The JCS text content_hash covers. */
  payload: string;
  content_hash: string;
  signature: string;
  protect_receipt_id: string | null;
}

type ReceiptArgs<K extends ReceiptKind> = { tenantId: string; keyId: string | null; kind: K; requestId: string; timestamp: string; payload: object; protectReceiptId: string | null };

/** The receipt before its signature, and the claims to sign. */
function unsigned<K extends ReceiptKind>(args: ReceiptArgs<K>): { receipt: Omit<SignedReceipt<K>, "signature">; claims: ReceiptClaims } {
  const payload = canonicalJson(args.payload);
  const content_hash = sha256HexSync(payload);
  const receipt_id = newId("rcpt_");
  const { tenantId: tenant_id, keyId: key_id, kind, requestId: request_id, timestamp, protectReceiptId: protect_receipt_id } = args;
  return {
    receipt: { receipt_id, tenant_id, key_id, kind, request_id, timestamp, payload, content_hash, protect_receipt_id },
    claims: receiptClaims({ receipt_id, tenant_id, key_id, kind, request_id, timestamp, content_hash, protect_receipt_id }),
  };
}

/**
 * Hashes and signs one receipt with `sign` (a signer's sign(), or signHeld() inside a transaction,
 * where the signer must read no database).
 */
export async function signReceipt<K extends ReceiptKind>(sign: (claims: ReceiptClaims) => Promise<string>, args: ReceiptArgs<K>): Promise<SignedReceipt<K>> {
  const { receipt, claims } = unsigned(args);
  return { ...receipt, signature: await sign(claims) };
}

/** signReceipt() on this thread, before anything else runs (a signer's signNow()). */
export function signReceiptNow<K extends ReceiptKind>(sign: (claims: ReceiptClaims) => string, args: ReceiptArgs<K>): SignedReceipt<K> {
  const { receipt, claims } = unsigned(args);
  return { ...receipt, signature: sign(claims) };
}
