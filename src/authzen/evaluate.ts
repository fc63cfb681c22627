// Running AuthZEN evaluations: each one is a POST /v1/protect of its mapped input (the same
// decision, signed receipt, daily quota and approval), answered in the specification's shape.
import { protect } from "../decisions/protect.ts";
import { AppError, toAppError } from "../http/errors.ts";
import type { Outcome } from "../http/idempotency.ts";
import type { KeyPrincipal } from "../keys/authenticate.ts";
import type { ProtectInput } from "../decide/policy.ts";
import type { Item } from "./mapping.ts";
import type { BatchDecision, BatchResponse, Decision, Semantic } from "./model.ts";

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
 * An evaluation of a batch: an item that could not be mapped, a quota refusal, or an action
 * outside the key's list becomes that evaluation's closed decision, so the others' answers still
 * reach the caller.
 */
async function evaluateItem(deps: Protecting, principal: KeyPrincipal, item: Item, requestId: string): Promise<BatchDecision> {
  if ("refused" in item) return closed(item.refused);
  try {
    return (await evaluateOne(deps, principal, item.input, requestId)).body as Decision;
  } catch (err) {
    const { error } = toAppError(err);
    if (error.code !== "quota_exceeded" && error.code !== "action_not_allowed") throw err;
    return closed(error);
  }
}

function closed(error: AppError): BatchDecision {
  const limit = error.options.fields?.limit;
  return { decision: false, context: { error: { status: error.status, code: error.code, message: error.message, ...(typeof limit === "string" ? { limit } : {}) } } };
}

/**
 * A batch under its semantic: execute_all decides every evaluation (concurrently: their receipts
 * share commits); deny_on_first_deny and permit_on_first_permit decide in order and stop after
 * the first denial (a refusal counts as one) or the first permit, answering what they decided.
 */
export async function evaluateBatch(deps: Protecting, principal: KeyPrincipal, items: Item[], semantic: Semantic, requestId: string): Promise<BatchDecision[]> {
  if (semantic === "execute_all") return Promise.all(items.map((item) => evaluateItem(deps, principal, item, requestId)));
  const stopOn = semantic === "permit_on_first_permit";
  const decisions: BatchDecision[] = [];
  for (const item of items) {
    const decision = await evaluateItem(deps, principal, item, requestId);
    decisions.push(decision);
    if (decision.decision === stopOn) break;
  }
  return decisions;
}

/**
 * A batch's answer. The working group's interop runners compare each item with a bare
 * `{decision}`, so an item carries its context only when the request asks for it
 * (`options.item_context`) or when it failed (the specification's per-evaluation error); the
 * receipts stay named, in item order, in the answer's top-level context.
 */
export function batchAnswer(decisions: BatchDecision[], itemContext: boolean): BatchResponse {
  return {
    evaluations: decisions.map((d) => (itemContext || "error" in d.context ? d : { decision: d.decision })),
    context: { receipt_ids: decisions.map((d) => ("receipt_id" in d.context ? d.context.receipt_id : null)) },
  };
}
