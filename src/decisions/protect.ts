// POST /v1/protect: the pure decision under the tenant's active policy, stored as a receipt.
import type { Outcome } from "../http/idempotency.ts";
import type { KeyPrincipal } from "../keys/authenticate.ts";
import { decide } from "../decide/engine.ts";
import { buildPayload } from "../decide/payload.ts";
import { payloadPrincipal, type ProtectInput } from "../decide/policy.ts";
import type { PolicyVersions } from "../policies/store.ts";
import { recordDecision, type Recording } from "./record.ts";

export async function protect(deps: Recording & { policies: PolicyVersions }, principal: KeyPrincipal, input: ProtectInput, requestId: string): Promise<Outcome> {
  const policy = await deps.policies.forRef(principal.tenant_id, principal.policy);
  const { decision, reasons, rule } = decide(input, policy.document, { key_id: principal.key_id });
  const caller = payloadPrincipal(policy.document, principal.key_id);
  const payload = buildPayload({ kind: "protect", input, policy: policy.ref, decision, reasons, rule, principal: caller });
  return recordDecision(deps, { tenantId: principal.tenant_id, keyId: principal.key_id, requestId, payload }, (receipt) => ({
    ok: true,
    verified: false,
    ...receipt,
  }));
}
