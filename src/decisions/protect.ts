// POST /v1/protect: the pure decision under the tenant's active policy, stored as a receipt. Under
// a require_approval rule the receipt is DENIED and opens an approval bound to its content_hash
// (docs/api.md, "Approvals"), which the answer names. Under usage rules (docs/policy.md, "Budgets
// and rate windows") the decision waits for the counters, read under the tenant's lock in the
// transaction that stores it, and names the facts it read.
import type { Outcome } from "../http/idempotency.ts";
import type { KeyPrincipal } from "../keys/authenticate.ts";
import { admitProtect, assertActionAllowed } from "../keys/rules.ts";
import { decide, type UsageFacts } from "../decide/engine.ts";
import { usageNeeds } from "../decide/usage-needs.ts";
import { entityRefs, readsEntities, type EntityFacts, type EntityFinder } from "../decide/entities.ts";
import { buildPayload, type ResultPayload } from "../decide/payload.ts";
import { callerOf, payloadPrincipal, type GatewayCaller, type ProtectInput, type PolicyDocument, type PolicyRef } from "../decide/policy.ts";
import type { PolicyVersions } from "../policies/store.ts";
import type { AnsweredApproval, OpenedApproval } from "../receipts/append.ts";
import type { DecisionReceiptView } from "../receipts/store.ts";
import { newId } from "../ids.ts";
import { executedBody, executePayload } from "./execute.ts";
import { recordDecision, recordWithExecute, type Recording } from "./record.ts";

/** The decision, its payload and the approval it opens, with the usage facts given (none: no usage rule) and the entities found. */
function decided(input: ProtectInput, policy: { ref: PolicyRef; document: PolicyDocument }, keyId: string, via: GatewayCaller | undefined, facts?: UsageFacts, entities?: EntityFacts): { payload: ResultPayload; approval?: OpenedApproval } {
  const caller = payloadPrincipal(policy.document, keyId, via);
  const { decision, reasons, rule, approval: terms, usage, entities: read } = decide(input, policy.document, callerOf(caller ?? { key_id: keyId }), facts, entities);
  const payload = buildPayload({ kind: "protect", input, policy: policy.ref, decision, reasons, rule, principal: caller, requires_approval: terms, usage, entities: read });
  const approval = terms && rule !== null ? { approval_id: newId("apv_"), ...terms, roles: [...terms.roles], rule, action: input.action } : undefined;
  return { payload, approval };
}

type ProtectDeps = Recording & { policies: PolicyVersions; entities?: EntityFinder };

/** What a protect reads before it decides: the key's own admission, the policy, the entities, the usage rules that apply. */
async function prepare(deps: ProtectDeps, principal: KeyPrincipal, input: ProtectInput, via?: GatewayCaller) {
  // A key's own actions and daily limit (docs/api.md, "Keys for agents"): refused before anything is stored.
  if (principal.rules !== null) await admitProtect(deps.db, principal.tenant_id, principal.key_id, principal.rules, input.action);
  const policy = await deps.policies.forRef(principal.tenant_id, principal.policy);
  // The input's subject and resource as stored, only under a policy that reads their attributes.
  const entities: EntityFacts | undefined = deps.entities && readsEntities(policy.document) ? await deps.entities.find(principal.tenant_id, entityRefs(input), principal.context_epoch) : undefined;
  const at = deps.now();
  const needs = usageNeeds(input, policy.document, callerOf(payloadPrincipal(policy.document, principal.key_id, via) ?? { key_id: principal.key_id }), at.toISOString(), entities);
  return { policy, entities, at, needs };
}

/**
 * `via`: the call came through a remote MCP gateway (src/gateways/), under the gateway's own key,
 * for this person and agent; the payload names them and policies read them.
 */
export async function protect(deps: ProtectDeps, principal: KeyPrincipal, input: ProtectInput, requestId: string, via?: GatewayCaller): Promise<Outcome> {
  return protectPrepared(deps, principal, input, requestId, via, await prepare(deps, principal, input, via));
}

/**
 * A protect and, when it is ALLOWED outright (no approval, no usage rules), its execute, stored in
 * one call to the log: what a remote MCP gateway does for each tools/call (src/gateways/). The
 * execute is the one POST /v1/execute would store, and is refused as that would be (`execute`
 * an Error). Otherwise the protect alone, as protect() stores it (no `execute`).
 */
export async function protectAndExecute(deps: ProtectDeps, principal: KeyPrincipal, input: ProtectInput, requestId: string, via?: GatewayCaller): Promise<{ protect: Outcome; execute?: Outcome | Error }> {
  const prepared = await prepare(deps, principal, input, via);
  if (prepared.needs.length > 0) return { protect: await protectPrepared(deps, principal, input, requestId, via, prepared) };
  const { payload, approval } = decided(input, prepared.policy, principal.key_id, via, undefined, prepared.entities);
  if (payload.decision !== "ALLOWED" || approval) return { protect: await protectPrepared(deps, principal, input, requestId, via, prepared, { payload, approval }) };
  // A key limited to some actions executes only those, as POST /v1/execute holds it (admitProtect() already asked the same).
  if (principal.rules !== null) assertActionAllowed(principal.rules, input.action);
  const args = { tenantId: principal.tenant_id, keyId: principal.key_id, requestId, payload, execute: executePayload(payload) };
  return recordWithExecute(deps, args, { protect: (receipt) => ({ ok: true, verified: false, ...receipt }), execute: executedBody });
}

async function protectPrepared(
  deps: ProtectDeps,
  principal: KeyPrincipal,
  input: ProtectInput,
  requestId: string,
  via: GatewayCaller | undefined,
  { policy, entities, at, needs }: Awaited<ReturnType<typeof prepare>>,
  made?: { payload: ResultPayload; approval?: OpenedApproval },
): Promise<Outcome> {
  let opened: OpenedApproval | undefined;
  // A retry of a held action answers the approval it already has (one per key and action hash):
  // no second approval, no second mail to the approvers.
  const shape = (receipt: DecisionReceiptView, answered?: AnsweredApproval) => ({
    ok: true,
    verified: false,
    ...receipt,
    ...(answered
      ? { approval: { ...answered, action_hash: receipt.content_hash } }
      : opened && {
          approval: {
            approval_id: opened.approval_id,
            status: "pending",
            expires_at: new Date(Date.parse(receipt.timestamp) + opened.expires_in * 1000).toISOString(),
            outcome_receipt_id: null,
            action_hash: receipt.content_hash,
          },
        }),
  });
  const args = { tenantId: principal.tenant_id, keyId: principal.key_id, requestId };
  if (needs.length === 0) {
    const { payload, approval } = made ?? decided(input, policy, principal.key_id, via, undefined, entities);
    opened = approval;
    return recordDecision(deps, { ...args, payload, approval }, shape);
  }
  const make = (facts: UsageFacts) => {
    const made = decided(input, policy, principal.key_id, via, facts, entities);
    opened = made.approval;
    return made;
  };
  return recordDecision(deps, { ...args, payload: decided(input, policy, principal.key_id, via, undefined, entities).payload, usage: { at, needs, make } }, shape);
}
