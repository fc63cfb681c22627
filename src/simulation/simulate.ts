// A dry run: the pure decision of a preset or an input under a policy (a stored version or a
// draft), its payload and hash, and the signed claims. Nothing is stored.
import { BoundedMap } from "../bounded-map.ts";
import { canonicalJson } from "../crypto/canonical.ts";
import { sha256HexSync } from "../crypto/sync.ts";
import { receiptClaims } from "../receipts/claims.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";
import { AppError } from "../http/errors.ts";
import { actionAllowable, decide, type UsageFacts } from "../decide/engine.ts";
import { buildPayload } from "../decide/payload.ts";
import { readsEntities, type EntityFacts } from "../decide/entities.ts";
import { payloadPrincipal, readsKeys, type ProtectInput, type SimulatedPolicy } from "../decide/policy.ts";
import { PRESETS } from "./presets.ts";

type Outcome = ReturnType<typeof outcome>;

/**
 * An input's decision, payload and content_hash under a policy (preset: the input is that
 * preset's). The key is a fact of the decision, and enters the payload, only when a rule reads it.
 */
function outcome(input: ProtectInput, policy: SimulatedPolicy, keyId: string | null, preset?: string, facts?: UsageFacts, entities?: EntityFacts) {
  const principal = payloadPrincipal(policy.document, keyId);
  const { decision, reasons, rule, approval, usage, entities: read } = decide(input, policy.document, { key_id: keyId }, facts, entities);
  const payload = buildPayload({ kind: "simulation", input, policy: policy.ref, decision, reasons, rule, principal, preset, requires_approval: approval, usage, entities: read });
  return { decision, reasons, payload, content_hash: sha256HexSync(canonicalJson(payload)) };
}

export class PresetOutcomes {
  /**
   * By preset and policy version. Freshness: an outcome is a pure function of the two, and versions
   * never change (the reference's hash covers the document), so an entry never goes stale.
   */
  private readonly known = new BoundedMap<string, Outcome>(10_000);

  /** name must be a preset's (PRESETS): the memo is keyed by it. */
  of(name: string, policy: SimulatedPolicy, keyId: string | null): Outcome {
    // The key matters only under a policy that reads it; otherwise every key shares one entry.
    const who = readsKeys(policy.document) ? `\u0000${keyId}` : "";
    const key = `${name}\u0000${policy.ref.policy_id}\u0000${policy.ref.version}\u0000${policy.ref.hash}${who}`;
    let found = this.known.get(key);
    if (!found) this.known.set(key, (found = outcome(PRESETS[name].input, policy, keyId, name)));
    return found;
  }
}

/** What to simulate: a named preset, or an input of the caller's own. */
export type Subject = { preset: string } | { input: ProtectInput };

export async function simulate(args: {
  subject: Subject;
  policy: SimulatedPolicy;
  requestId: string;
  tenantId: string;
  /** The calling API key; null for a session. */
  keyId: string | null;
  timestamp: string;
  signer: ReceiptSigner;
  outcomes: PresetOutcomes;
  /** The usage facts read for the policy's usage rules (none: no usage rule applies). */
  usage?: UsageFacts;
  /** The input's subject and resource (given inline, or as stored) when the policy reads attributes. */
  entities?: EntityFacts;
}) {
  const { subject } = args;
  let preset: string | null = null;
  let result: Outcome;
  let action: string;
  if ("preset" in subject) {
    if (!Object.hasOwn(PRESETS, subject.preset)) throw new AppError("invalid_preset", "Unknown preset; GET /v1/presets lists them.");
    preset = subject.preset;
    action = PRESETS[subject.preset].input.action;
    // Under usage facts or stored attributes the outcome depends on more than the preset and version: not memoised.
    const memo = !args.usage && !readsEntities(args.policy.document);
    result = memo ? args.outcomes.of(subject.preset, args.policy, args.keyId) : outcome(PRESETS[subject.preset].input, args.policy, args.keyId, subject.preset, args.usage, args.entities);
  } else {
    result = outcome(subject.input, args.policy, args.keyId, undefined, args.usage, args.entities);
    action = subject.input.action;
  }
  const { decision, reasons, payload, content_hash } = result;
  // A simulation is never stored: no receipt id, no executed protect.
  const claims = receiptClaims({
    receipt_id: null,
    tenant_id: args.tenantId,
    key_id: args.keyId,
    kind: "simulation",
    request_id: args.requestId,
    timestamp: args.timestamp,
    content_hash,
    protect_receipt_id: null,
  });
  const signature = await args.signer.sign(claims);
  return {
    ok: true as const,
    verified: false,
    decision,
    request_id: args.requestId,
    content_hash,
    timestamp: args.timestamp,
    preset,
    reasons,
    // The same decision a protect would answer (DENIED), saying that people could approve it.
    approval_required: payload.requires_approval !== undefined,
    // Whether another input with this action could pass (what `mcp gateway --hide-denied` hides by).
    action_allowable: actionAllowable(action, args.policy.document, { key_id: args.keyId }),
    payload,
    tenant_id: claims.tenant_id,
    key_id: claims.key_id,
    receipt_id: null,
    protect_receipt_id: null,
    kind: "simulation" as const,
    signature,
  };
}
