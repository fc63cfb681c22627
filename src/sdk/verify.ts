// The SDK's offline checks of what warden signs (docs/sdk.md): the code `warden verify`,
// `warden verify --proof` and the console run, behind types of the SDK's own, so that the
// published declarations need nothing of the service's sources.
import { verifyApprovalBundle as verifyApproval } from "../approvals/bundle.ts";
import { verifyProofBundle as verifyBundle } from "../receipts/proof-bundle.ts";
import { Value } from "@sinclair/typebox/value";
import { PolicyDocument } from "../decide/policy.ts";
import { verifyResult as verifySigned } from "../receipts/verify.ts";
import { decisionHoldsOffline } from "../receipts/verify-decision.ts";

/** A public key of `GET /.well-known/jwks.json` (Ed25519); other fields are ignored. */
export interface Jwk {
  kty?: string;
  crv?: string;
  x?: string;
  kid?: string;
  alg?: string;
  use?: string;
  /** The key was revoked as compromised: what it signed at or after this instant does not verify. */
  compromised_since?: string;
  [field: string]: unknown;
}

/** The body of `GET /.well-known/jwks.json` (its `ok` is not needed). */
export interface Jwks {
  keys: Jwk[];
}

export interface ResultVerification {
  /** Every check holds. */
  verified: boolean;
  checks: {
    /** The payload's RFC 8785 (JCS) SHA-256 is the result's content_hash, and the decision shown is the one hashed. */
    content_hash: boolean;
    /** The EdDSA signature covers exactly the claims the result shows, by a key of the JWKS not compromised at the signed time. */
    signature: boolean;
    /**
     * Only with `options.policy` (the document of the policy version the payload names, whose hash
     * it must have): deciding again from the payload alone gives its decision, reasons, rule and
     * the usage facts and stored attributes it read, as POST /v1/verify decides it.
     */
    decision?: boolean;
  };
}

export interface ProofBundleVerification {
  verified: boolean;
  checks: ResultVerification["checks"] & {
    /** The receipt's chain_hash covers its claims, prev_hash and seq. */
    chain_hash: boolean;
    /** The RFC 9162 inclusion proof leads from the receipt's leaf to the checkpoint's root. */
    inclusion: boolean;
    /** The checkpoint (and its C2SP note, when present) is signed by the JWKS for the receipt's tenant. */
    checkpoint: boolean;
  };
}

/**
 * A bundle as `fetchProofBundle()` or `warden proof` makes it: the bodies of
 * `GET /customer/receipts/{id}` (or its `receipt`), `.../{id}/proof?tree_size=N` and
 * `.../checkpoint` of size N.
 */
export interface ProofBundle {
  receipt: unknown;
  proof: unknown;
  checkpoint: unknown;
}

/**
 * Checks a protect, execute or simulation result (or a stored receipt) offline against the
 * service's JWKS; given `options.policy`, the document of the policy version the payload names
 * (`GET /customer/policy/versions/{version}`'s `document`), also decides it again from the payload
 * alone. Never throws: anything that is not a well-formed, untouched result fails a check.
 */
export async function verifyResult(result: unknown, jwks: Jwks, options: { policy?: unknown } = {}): Promise<ResultVerification> {
  const signed = await verifySigned(result, jwks as { keys: JsonWebKey[] });
  if (options.policy === undefined) return signed;
  const decision = Value.Check(PolicyDocument, options.policy) && (await decisionHoldsOffline(result, options.policy));
  return { verified: signed.verified && decision, checks: { ...signed.checks, decision } };
}

/**
 * Checks offline that a receipt is in the log the service signed (`warden verify --proof`). Never
 * throws: a bundle read from a file may be anything, and then fails a check.
 */
export function verifyProofBundle(bundle: ProofBundle, jwks: Jwks): Promise<ProofBundleVerification> {
  return verifyBundle(bundle, jwks as { keys: JsonWebKey[] });
}

/**
 * An approval's bundle: the body of `GET /customer/approvals/{approval_id}/bundle`
 * (`getCustomerApprovalsByApprovalIdBundle`), every receipt of the approval with its inclusion
 * proof at one signed checkpoint; its `ok` is not needed.
 */
export interface ApprovalBundle {
  receipts: unknown[];
  proofs: unknown[];
  checkpoint: unknown;
}

export interface ApprovalBundleVerification {
  /** Every check holds. */
  verified: boolean;
  checks: {
    /** Every receipt is signed, hashed, chained and included under the signed checkpoint. */
    receipts_in_log: boolean;
    /** One protect receipt, DENIED by a require_approval rule, carrying the terms. */
    protect: boolean;
    /** Every vote is on this approval and this exact action, by a distinct person (account) as a member of a role the terms name, before expiry and before the outcome. */
    votes: boolean;
    /** One outcome naming exactly those votes, its status justified by them (or by the clock), ALLOWED exactly when approved. */
    outcome: boolean;
    /** When the bundle holds an execute: of the approved outcome, within execute_within, for the same input. */
    execute: boolean;
  };
  /** The approval the outcome names, when there is one. */
  approval_id: string | null;
  /** approved, denied, expired or cancelled, as the outcome says. */
  status: string | null;
  /** The member ids that voted approve. */
  approvers: string[];
}

/**
 * Checks offline, with only the JWKS, who approved what (`warden verify --proof` on a saved
 * bundle, the console's check): a quorum of distinct people (accounts) of the roles the terms name approved
 * this exact action before expiry and before the outcome, every receipt of it in the signed log.
 * Never throws: a bundle read from a file may be anything, and then fails a check.
 */
export function verifyApprovalBundle(bundle: ApprovalBundle, jwks: Jwks): Promise<ApprovalBundleVerification> {
  return verifyApproval(bundle, jwks as { keys: JsonWebKey[] });
}
