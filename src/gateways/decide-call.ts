// A tools/call through a remote gateway, decided in this process exactly as the stdio gateway has
// warden decide it (docs/mcp.md, "Remote gateways"): action mcp.<gateway name>.<tool>, the
// arguments flattened into the context with their JCS SHA-256, a protect under the gateway's key
// naming the person, the agent and the gateway; ALLOWED: an execute (stored with the protect in one
// call to the log when the policy allows outright), then the call goes upstream;
// DENIED: refused; held for approval: waited for, within a bound. Anything failing refuses the
// call (fail closed).
import type { JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { ApprovalView, Approvals } from "../approvals/approvals.ts";
import type { ApprovalWaiters } from "../approvals/waiters.ts";
import type { EntityFinder } from "../decide/entities.ts";
import type { GatewayCaller } from "../decide/policy.ts";
import { execute } from "../decisions/execute.ts";
import { protect, protectAndExecute } from "../decisions/protect.ts";
import type { Recording } from "../decisions/record.ts";
import { assertVerdict } from "../features/gate.ts";
import type { KeyPrincipal } from "../keys/authenticate.ts";
import type { CallRecord } from "../mcp/calls.ts";
import { argumentsTooLarge, callContext, toolAction } from "../mcp/context.ts";
import type { PolicyVersions } from "../policies/store.ts";

export interface CallDeciding extends Recording {
  policies: PolicyVersions;
  entities?: EntityFinder;
  approvals: Approvals;
  approvalWaiters: ApprovalWaiters;
}

/** Forward the call (the record goes into its result), or answer it with this refusal. */
export type CallVerdict = { forward: true; record: CallRecord } | { forward: false; record: CallRecord; text: string };

/** What the body of a protect or execute answer holds that the call needs. */
type Decided = { receipt_id: string; decision: "ALLOWED" | "DENIED"; reasons: string[]; approval?: { approval_id: string; status: string; outcome_receipt_id: string | null } };

export async function decideCall(
  deps: CallDeciding,
  o: { principal: KeyPrincipal; via: GatewayCaller; request: JSONRPCRequest; requestId: string; waitMs: number; signal?: AbortSignal },
): Promise<CallVerdict> {
  const params = (o.request.params ?? {}) as { name?: unknown; arguments?: unknown };
  const undecided = (error: string, action = ""): CallVerdict => ({ forward: false, record: { action, arguments_sha256: "", decision: "UNDECIDED", error }, text: `Refused by warden: ${error}; the call was not forwarded.` });
  const named = toolAction(o.via.gateway, params.name);
  if ("error" in named) return undecided(named.error);
  const { action } = named;
  const tooLarge = argumentsTooLarge(params.arguments);
  if (tooLarge) return undecided(`${action}: ${tooLarge}`, action);
  const { context, argumentsSha256 } = await callContext(params.arguments);
  const { principal } = o;
  assertVerdict("protect", principal.features.protect);
  // ALLOWED outright: the protect and its execute go to the log in one call. Without the execute
  // feature, the protect alone, and executed() refuses as POST /v1/execute would.
  const both = principal.features.execute?.verdict === "allowed" ? await protectAndExecute(deps, principal, { action, context }, o.requestId, o.via) : { protect: await protect(deps, principal, { action, context }, o.requestId, o.via) };
  const asked = both.protect.body as unknown as Decided;
  const record: CallRecord = { action, arguments_sha256: argumentsSha256, decision: asked.decision, reasons: asked.reasons, receipt_id: asked.receipt_id };
  if (both.execute instanceof Error) throw both.execute;
  if (both.execute) return { forward: true, record: { ...record, execute_receipt_id: (both.execute.body as unknown as Decided).receipt_id } };
  if (asked.decision === "ALLOWED") return executed(deps, o, record, asked.receipt_id);
  if (!asked.approval) return { forward: false, record, text: `Refused by warden: ${action} is DENIED (${asked.reasons.join(", ")}); receipt ${asked.receipt_id}. The call was not forwarded.` };
  // Held for people: wait (bounded) for the approval to leave pending; a retry of the same call
  // while it is pending, approved or lately denied answers that approval (one per key and action).
  const withApproval: CallRecord = { ...record, approval_id: asked.approval.approval_id, approval_status: asked.approval.status };
  const approval = await awaitApproval(deps, principal.tenant_id, asked.approval.approval_id, o.waitMs, o.signal);
  const settled: CallRecord = { ...withApproval, approval_status: approval.status, outcome_receipt_id: approval.outcome_receipt_id ?? undefined };
  if (approval.status === "approved") return executed(deps, o, { ...settled, decision: "ALLOWED" }, approval.outcome_receipt_id!);
  if (approval.status === "pending") {
    return {
      forward: false,
      record: settled,
      text: `Refused by warden for now: ${action} needs a person's approval (${asked.reasons.join(", ")}). Approval ${approval.approval_id} is still pending (receipt ${asked.receipt_id}); make the same call again once it is approved.`,
    };
  }
  return {
    forward: false,
    record: settled,
    text: `Refused by warden: approval ${approval.approval_id} of ${action} is ${approval.status}${approval.outcome_receipt_id ? ` (outcome receipt ${approval.outcome_receipt_id})` : ""}; the call was not forwarded.`,
  };
}

/** ALLOWED (by the policy or by people): the execute receipt, then forward. */
async function executed(deps: CallDeciding, o: { principal: KeyPrincipal; requestId: string }, record: CallRecord, receiptId: string): Promise<CallVerdict> {
  assertVerdict("execute", o.principal.features.execute);
  const done = (await execute(deps, o.principal, receiptId, o.requestId)).body as unknown as Decided;
  return { forward: true, record: { ...record, execute_receipt_id: done.receipt_id } };
}

/** The approval once it left pending, or as it stands when the wait ends (no connection held while waiting). */
async function awaitApproval(deps: CallDeciding, tenantId: string, approvalId: string, waitMs: number, signal?: AbortSignal): Promise<ApprovalView> {
  const deadline = Date.now() + waitMs;
  let approval = await deps.approvals.get(tenantId, approvalId);
  while (approval.status === "pending" && Date.now() < deadline && !signal?.aborted) {
    const changed = await deps.approvalWaiters.until(tenantId, approvalId, deadline - Date.now(), signal);
    if (changed || Date.now() >= Date.parse(approval.expires_at)) approval = await deps.approvals.get(tenantId, approvalId);
    if (!changed) break;
  }
  return approval;
}
