// Running AuthZEN evaluations: each one is a POST /v1/protect of its mapped input (the same
// decision, signed receipt, daily quota and approval), answered in the specification's shape.
import { protect } from "../decisions/protect.ts";
import { AppError, toAppError } from "../http/errors.ts";
import type { Outcome } from "../http/idempotency.ts";
import type { KeyPrincipal } from "../keys/authenticate.ts";
import type { ProtectInput } from "../decide/policy.ts";
import type { BatchDecision, Decision, Semantic } from "./model.ts";

/** What a protect needs of the service. */
type Protecting = Parameters<typeof protect>[0];

/** What toDecision reads of a protect result. */
interface ProtectAnswer {
  receipt_id: string;
  decision: string;
  reasons: string[];
  approval?: { approval_id: string; status: string; expires_at: string };
}

/**
 * The AuthZEN decision of one protect result: true if and only if it was ALLOWED. Under a
 * require_approval rule the context names the approval, so the gateway that asked can follow it
 * (GET /v1/approvals/{approval_id}) instead of learning only that the answer is no.
 */
export function toDecision(result: ProtectAnswer): Decision {
  const { approval } = result;
  return {
    decision: result.decision === "ALLOWED",
    context: {
      receipt_id: result.receipt_id,
      reason_user: result.reasons.join("; "),
      ...(approval && { approval_id: approval.approval_id, approval_status: approval.status, expires_at: approval.expires_at }),
    },
  };
}

/** One evaluation: protect's outcome (a quota refusal throws, as on /v1/protect), reshaped. */
export async function evaluateOne(deps: Protecting, principal: KeyPrincipal, input: ProtectInput, requestId: string): Promise<Outcome> {
  const outcome = await protect(deps, principal, input, requestId);
  return { ...outcome, body: toDecision(outcome.body as ProtectAnswer) };
}

/**
 * An evaluation of a batch: a quota refusal, or an action outside the key's list, becomes that
 * evaluation's closed decision, so the others' answers still reach the caller.
 */
async function evaluateItem(deps: Protecting, principal: KeyPrincipal, input: ProtectInput, requestId: string): Promise<BatchDecision> {
  try {
    return (await evaluateOne(deps, principal, input, requestId)).body as Decision;
  } catch (err) {
    const { error } = toAppError(err);
    if (error.code !== "quota_exceeded" && error.code !== "action_not_allowed") throw err;
    return { decision: false, context: { error: errorContext(error) } };
  }
}

function errorContext(error: AppError): { status: number; code: string; message: string; limit?: string } {
  const limit = error.options.fields?.limit;
  return { status: error.status, code: error.code, message: error.message, ...(typeof limit === "string" ? { limit } : {}) };
}

/**
 * A batch under its semantic: execute_all decides every evaluation (concurrently: their receipts
 * share commits); deny_on_first_deny and permit_on_first_permit decide in order and stop after
 * the first denial (a refusal counts as one) or the first permit, answering what they decided.
 */
export async function evaluateBatch(deps: Protecting, principal: KeyPrincipal, inputs: ProtectInput[], semantic: Semantic, requestId: string): Promise<BatchDecision[]> {
  if (semantic === "execute_all") return Promise.all(inputs.map((input) => evaluateItem(deps, principal, input, requestId)));
  const stopOn = semantic === "permit_on_first_permit";
  const decisions: BatchDecision[] = [];
  for (const input of inputs) {
    const decision = await evaluateItem(deps, principal, input, requestId);
    decisions.push(decision);
    if (decision.decision === stopOn) break;
  }
  return decisions;
}
