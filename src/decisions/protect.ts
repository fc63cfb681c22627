// POST /v1/protect: the pure decision under the tenant's active policy, stored as a receipt. Under
// a require_approval rule the receipt is DENIED and opens an approval bound to its content_hash
// (docs/api.md, "Approvals"), which the answer names.
import type { Outcome } from "../http/idempotency.ts";
import type { KeyPrincipal } from "../keys/authenticate.ts";
import { decide } from "../decide/engine.ts";
import { buildPayload } from "../decide/payload.ts";
import { payloadPrincipal, type ProtectInput } from "../decide/policy.ts";
import type { PolicyVersions } from "../policies/store.ts";
import { newId } from "../ids.ts";
import { recordDecision, type Recording } from "./record.ts";

export async function protect(deps: Recording & { policies: PolicyVersions }, principal: KeyPrincipal, input: ProtectInput, requestId: string): Promise<Outcome> {
  const policy = await deps.policies.forRef(principal.tenant_id, principal.policy);
  const { decision, reasons, rule, approval: terms } = decide(input, policy.document, { key_id: principal.key_id });
  const caller = payloadPrincipal(policy.document, principal.key_id);
  const payload = buildPayload({ kind: "protect", input, policy: policy.ref, decision, reasons, rule, principal: caller, requires_approval: terms });
  const approval = terms && rule !== null ? { approval_id: newId("apv_"), ...terms, roles: [...terms.roles], rule, action: input.action } : undefined;
  return recordDecision(deps, { tenantId: principal.tenant_id, keyId: principal.key_id, requestId, payload, approval }, (receipt) => ({
    ok: true,
    verified: false,
    ...receipt,
    ...(approval && {
      approval: {
        approval_id: approval.approval_id,
        status: "pending",
        expires_at: new Date(Date.parse(receipt.timestamp) + approval.expires_in * 1000).toISOString(),
        action_hash: receipt.content_hash,
      },
    }),
  }));
}
