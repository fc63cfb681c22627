// Offline check of an approval bundle (GET /customer/approvals/{id}/bundle; `warden verify --proof`
// and the console): with only the JWKS, that every receipt of the approval is signed and in the
// tenant's log under the checkpoint, and that a quorum of distinct people (accounts: one who
// left and came back, or votes through two memberships, is one), each a member of a role the
// terms name, approved this exact action (the protect receipt's content_hash) before the outcome
// and before expiry, under the terms the protect receipt carries. Input comes from files: nothing
// here may throw. Docs: docs/api.md, "Approvals".
import { canonicalJson } from "../crypto/canonical.ts";
import { verifyProofBundle } from "../receipts/proof-bundle.ts";

export interface ApprovalBundleChecks {
  /** Every receipt is signed, hashed, chained and included under the signed checkpoint. */
  receipts_in_log: boolean;
  /** One protect receipt, DENIED by a require_approval rule, carrying the terms. */
  protect: boolean;
  /** Every vote is on this approval and this exact action, by a distinct person (account) as a member of a role the terms name, before expiry and before the outcome. */
  votes: boolean;
  /** One outcome naming exactly those votes, its status justified by them (or by the clock), ALLOWED exactly when approved. */
  outcome: boolean;
  /** When the bundle holds an execute: of the approved outcome, by the key that asked, within execute_within, for the same input. */
  execute: boolean;
}

type Fields = Record<string, unknown>;
const isObject = (v: unknown): v is Fields => v !== null && typeof v === "object" && !Array.isArray(v);
const time = (v: unknown) => (typeof v === "string" ? Date.parse(v) : NaN);

/** What a bundle looks like: {receipts, proofs, checkpoint} with one proof per receipt. */
export function isApprovalBundle(value: unknown): boolean {
  return isObject(value) && Array.isArray(value.receipts) && Array.isArray(value.proofs) && isObject(value.checkpoint);
}

export async function verifyApprovalBundle(
  bundle: unknown,
  jwks: { keys: JsonWebKey[] },
): Promise<{ verified: boolean; checks: ApprovalBundleChecks; approval_id: string | null; status: string | null; approvers: string[] }> {
  const failed = { receipts_in_log: false, protect: false, votes: false, outcome: false, execute: false };
  if (!isApprovalBundle(bundle)) return { verified: false, checks: failed, approval_id: null, status: null, approvers: [] };
  const b = bundle as { receipts: unknown[]; proofs: unknown[]; checkpoint: Fields };
  const receipts = b.receipts.filter(isObject);

  // 1. Each receipt on its own: signature, hash, chain, inclusion, checkpoint.
  let inLog = receipts.length === b.receipts.length && b.proofs.length === receipts.length && receipts.length > 0;
  for (let i = 0; inLog && i < receipts.length; i++) {
    const { verified } = await verifyProofBundle({ receipt: receipts[i], proof: b.proofs[i], checkpoint: b.checkpoint }, jwks);
    inLog = verified;
  }

  // 2. The protect that opened it: DENIED under a require_approval rule, with its terms.
  const protects = receipts.filter((r) => r.kind === "protect");
  const protect = protects.length === 1 ? protects[0] : undefined;
  const pp = isObject(protect?.payload) ? protect.payload : undefined;
  const terms = isObject(pp?.requires_approval) ? pp.requires_approval : undefined;
  const protectOk = !!protect && !!pp && !!terms && protect.decision === "DENIED" && pp.decision === "DENIED";
  const actionHash = protect?.content_hash;

  // 3. The outcome: one, on this protect and action, under the same terms.
  const outcomes = receipts.filter((r) => r.kind === "approval");
  const outcome = outcomes.length === 1 ? outcomes[0] : undefined;
  const op = isObject(outcome?.payload) && isObject(outcome.payload.outcome) ? outcome.payload.outcome : undefined;
  const approvalId = typeof op?.approval_id === "string" ? op.approval_id : null;
  const status = typeof op?.status === "string" ? op.status : null;
  const expiresAt = time(op?.expires_at);
  const quorum = typeof terms?.quorum === "number" ? terms.quorum : NaN;
  const roles = Array.isArray(terms?.roles) ? (terms.roles as unknown[]) : [];
  const termsMatch = !!terms && !!op && canonicalJson(op.terms) === canonicalJson(terms);
  const expiryMatch = !!protect && typeof terms?.expires_in === "number" && time(protect.timestamp) + terms.expires_in * 1000 === expiresAt;

  // 4. The votes: on this approval and action, distinct people as members of eligible roles, before expiry and the outcome.
  const votes = receipts.filter((r) => r.kind === "vote").sort((x, y) => (x.seq as number) - (y.seq as number));
  const vp = votes.map((v) => (isObject(v.payload) ? v.payload : {}));
  const people = vp.map((p) => p.account_id);
  const votesOk =
    !!protect &&
    !!outcome &&
    people.every((a) => typeof a === "string" && a !== "") &&
    new Set(people).size === people.length &&
    votes.every(
      (v, i) =>
        v.protect_receipt_id === protect.receipt_id &&
        vp[i].kind === "vote" &&
        vp[i].approval_id === approvalId &&
        vp[i].action_hash === actionHash &&
        roles.includes(vp[i].role) &&
        (v.seq as number) > (protect.seq as number) &&
        (v.seq as number) < (outcome.seq as number) &&
        time(v.timestamp) < expiresAt,
    );

  // 5. The outcome names exactly those votes, and they (or the clock) justify it.
  const approves = vp.filter((p) => p.vote === "approve").length;
  const denies = vp.filter((p) => p.vote === "deny").length;
  const justified =
    status === "approved"
      ? approves >= quorum && denies === 0 && time(outcome?.timestamp) < expiresAt
      : status === "denied"
        ? denies > 0
        : status === "expired"
          ? time(outcome?.timestamp) >= expiresAt
          : status === "cancelled";
  const outcomeOk =
    !!outcome &&
    !!protect &&
    !!op &&
    outcome.protect_receipt_id === protect.receipt_id &&
    op.action_hash === actionHash &&
    termsMatch &&
    expiryMatch &&
    canonicalJson(op.votes) === canonicalJson(votes.map((v) => v.receipt_id)) &&
    (outcome.decision === "ALLOWED") === (status === "approved") &&
    justified;

  // 6. An execute, when there is one: of this outcome, approved, in time, the same input.
  const executes = receipts.filter((r) => r.kind === "execute");
  const ex = executes[0];
  const ep = isObject(ex?.payload) ? ex.payload : undefined;
  const executeOk =
    executes.length === 0 ||
    (executes.length === 1 &&
      !!outcome &&
      !!pp &&
      status === "approved" &&
      ex.protect_receipt_id === outcome.receipt_id &&
      ex.key_id === protect?.key_id &&
      (ex.seq as number) > (outcome.seq as number) &&
      time(ex.timestamp) < time(outcome.timestamp) + (typeof terms?.execute_within === "number" ? terms.execute_within : 0) * 1000 &&
      canonicalJson(ep?.input) === canonicalJson(pp.input));

  const checks = { receipts_in_log: inLog, protect: protectOk, votes: votesOk, outcome: outcomeOk, execute: executeOk };
  const approvers = vp.filter((p) => p.vote === "approve").map((p) => String(p.member_id));
  return { verified: Object.values(checks).every(Boolean), checks, approval_id: approvalId, status, approvers };
}
