// The receipt "verify" button: checked here, in the browser, with WebCrypto and the public JWKS,
// never by asking the server. It runs the very check of `warden verify --proof`
// (src/receipts/proof-bundle.ts): content_hash (JCS + SHA-256), the Ed25519 signature, the
// chain_hash, the inclusion proof against the signed checkpoint, and the checkpoint's signature and
// C2SP note; for a decision, also the decision made again under the policy version it names.
import { verifyProofBundle, type ProofChecks } from "../../receipts/proof-bundle.ts";
import { decisionHoldsOffline } from "../../receipts/verify-decision.ts";
import type { PolicyDocument } from "../../decide/policy.ts";
import { verifyApprovalBundle, type ApprovalBundleChecks } from "../../approvals/bundle.ts";
import { api } from "./api.ts";

export type { ApprovalBundleChecks, ProofChecks };

export interface BrowserVerification {
  verified: boolean;
  /** `decision`: only for a decision (its payload names a policy version), made again here. */
  checks: ProofChecks & { decision?: boolean };
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
  const proved = await verifyProofBundle({ receipt, proof, checkpoint }, jwks);
  // A decision is also made again here, from its payload alone, under the policy version it names
  // (src/receipts/verify-decision.ts, as `warden verify --policy` makes it).
  const version = policyVersionOf(receipt);
  const checks: BrowserVerification["checks"] = { ...proved.checks };
  if (version !== undefined) {
    const { document } = await api<{ document: PolicyDocument }>("GET", `/customer/policy/versions/${version}`);
    checks.decision = await decisionHoldsOffline(receipt, document);
  }
  const kids = jwks.keys.map((k) => (k as { kid?: string }).kid ?? "").filter(Boolean);
  return { verified: proved.verified && checks.decision !== false, checks, tree_size: checkpoint.tree_size, root_hash: checkpoint.root_hash, kids };
}

/** The policy version a decision's payload names (none for an audit event, a vote or an outcome). */
function policyVersionOf(receipt: unknown): number | undefined {
  const payload = (receipt as { payload?: { kind?: unknown; policy?: { version?: unknown } } }).payload;
  const version = payload?.policy?.version;
  return (payload?.kind === "protect" || payload?.kind === "execute") && typeof version === "number" ? version : undefined;
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
  /**
   * The approval's own checks (src/approvals/bundle.ts, as `warden verify --proof` runs them): a
   * quorum of distinct eligible members approved this exact action within the terms. Only once it
   * is decided: a pending approval has no outcome in the log yet.
   */
  approval?: { checks: ApprovalBundleChecks; status: string | null; approvers: string[] };
  tree_size: number;
  root_hash: string;
}

/**
 * An approval's bundle (GET /customer/approvals/{id}/bundle: every receipt of it, a proof of each,
 * one checkpoint): each receipt checked here with its proof against that checkpoint and the JWKS,
 * and, once `decided`, the approval itself.
 */
export async function verifyApprovalBundleInBrowser(approvalId: string, decided: boolean): Promise<BundleVerification> {
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
  const inLog = receipts.length > 0 && bundle.proofs.length === receipts.length && receipts.every((r) => r.verified);
  const approval = decided ? await verifyApprovalBundle(bundle, jwks) : undefined;
  return {
    verified: inLog && (approval?.verified ?? true),
    receipts,
    approval: approval && { checks: approval.checks, status: approval.status, approvers: approval.approvers },
    tree_size: bundle.checkpoint.tree_size,
    root_hash: bundle.checkpoint.root_hash,
  };
}
