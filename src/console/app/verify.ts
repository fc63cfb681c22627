// The receipt "verify" button: checked here, in the browser, with WebCrypto and the public JWKS,
// never by asking the server. It runs the very check of `warden verify --proof`
// (src/receipts/proof-bundle.ts): content_hash (JCS + SHA-256), the Ed25519 signature, the
// chain_hash, the inclusion proof against the signed checkpoint, and the checkpoint's signature and C2SP note.
import { verifyProofBundle, type ProofChecks } from "../../receipts/proof-bundle.ts";
import { api } from "./api.ts";

export type { ProofChecks };

export interface BrowserVerification {
  verified: boolean;
  checks: ProofChecks;
  tree_size: number;
  root_hash: string;
  kids: string[];
}

export async function verifyInBrowser(receipt: { receipt_id: string }): Promise<BrowserVerification> {
  // Only the material comes from the server: the keys, the signed tree head and the proof path.
  const [jwks, checkpoint] = await Promise.all([
    api<{ keys: JsonWebKey[] }>("GET", "/.well-known/jwks.json", { auth: false }),
    api<{ tree_size: number; root_hash: string }>("GET", "/customer/receipts/checkpoint"),
  ]);
  const proof = await api("GET", `/customer/receipts/${encodeURIComponent(receipt.receipt_id)}/proof?tree_size=${checkpoint.tree_size}`);
  const { verified, checks } = await verifyProofBundle({ receipt, proof, checkpoint }, jwks);
  const kids = jwks.keys.map((k) => (k as { kid?: string }).kid ?? "").filter(Boolean);
  return { verified, checks, tree_size: checkpoint.tree_size, root_hash: checkpoint.root_hash, kids };
}

/** One receipt of an approval's bundle, checked like any receipt. */
export interface BundleReceiptCheck {
  receipt_id: string;
  kind: string;
  seq: number;
  verified: boolean;
  checks: ProofChecks;
}

export interface BundleVerification {
  verified: boolean;
  receipts: BundleReceiptCheck[];
  tree_size: number;
  root_hash: string;
}

/**
 * An approval's bundle (GET /customer/approvals/{id}/bundle: every receipt of it, a proof of each,
 * one checkpoint), each receipt checked here with its proof against that checkpoint and the JWKS.
 */
export async function verifyApprovalBundleInBrowser(approvalId: string): Promise<BundleVerification> {
  const [jwks, bundle] = await Promise.all([
    api<{ keys: JsonWebKey[] }>("GET", "/.well-known/jwks.json", { auth: false }),
    api<{ receipts: { receipt_id: string; kind: string; seq: number }[]; proofs: unknown[]; checkpoint: { tree_size: number; root_hash: string } }>(
      "GET",
      `/customer/approvals/${encodeURIComponent(approvalId)}/bundle`,
    ),
  ]);
  const receipts: BundleReceiptCheck[] = [];
  for (const [i, receipt] of bundle.receipts.entries()) {
    const { verified, checks } = await verifyProofBundle({ receipt, proof: bundle.proofs[i], checkpoint: bundle.checkpoint }, jwks);
    receipts.push({ receipt_id: receipt.receipt_id, kind: receipt.kind, seq: receipt.seq, verified, checks });
  }
  // A bundle without receipts proves nothing; one proof short leaves a receipt unchecked (failed above).
  const verified = receipts.length > 0 && bundle.proofs.length === receipts.length && receipts.every((r) => r.verified);
  return { verified, receipts, tree_size: bundle.checkpoint.tree_size, root_hash: bundle.checkpoint.root_hash };
}
