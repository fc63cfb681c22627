// A dry run of a named preset: the pure decision, its payload and hash, and the signed claims.
import { BoundedMap } from "../bounded-map.ts";
import { canonicalJson } from "../crypto/canonical.ts";
import { sha256HexSync } from "../crypto/sync.ts";
import { receiptClaims } from "../receipts/claims.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";
import { AppError } from "../http/errors.ts";
import { decide } from "./engine.ts";
import { buildPayload, type PolicyRef } from "./payload.ts";
import type { PolicyDocument } from "./policy.ts";
import { PRESETS } from "./presets.ts";

export interface ActivePolicy {
  ref: PolicyRef;
  document: PolicyDocument;
}

type Outcome = ReturnType<typeof outcome>;

/** A preset's decision, payload and content_hash under a policy version. */
function outcome(name: string, policy: ActivePolicy) {
  const { input } = PRESETS[name];
  const { decision, reasons, rule } = decide(input, policy.document);
  const payload = buildPayload({ kind: "simulation", input, policy: policy.ref, decision, reasons, rule, preset: name });
  return { decision, reasons, payload, content_hash: sha256HexSync(canonicalJson(payload)) };
}

export class PresetOutcomes {
  /**
   * By preset and policy version. Freshness: an outcome is a pure function of the two, and versions
   * never change (the reference's hash covers the document), so an entry never goes stale.
   */
  private readonly known = new BoundedMap<string, Outcome>(10_000);

  /** name must be a preset's (PRESETS): the memo is keyed by it. */
  of(name: string, policy: ActivePolicy): Outcome {
    const key = `${name}\u0000${policy.ref.policy_id}\u0000${policy.ref.version}\u0000${policy.ref.hash}`;
    let found = this.known.get(key);
    if (!found) this.known.set(key, (found = outcome(name, policy)));
    return found;
  }
}

export async function simulatePreset(args: {
  preset: string;
  policy: ActivePolicy;
  requestId: string;
  tenantId: string;
  /** The calling API key; null for a session. */
  keyId: string | null;
  timestamp: string;
  signer: ReceiptSigner;
  outcomes: PresetOutcomes;
}) {
  if (!Object.hasOwn(PRESETS, args.preset)) throw new AppError("invalid_preset", "Unknown preset; GET /v1/presets lists them.");
  const { decision, reasons, payload, content_hash } = args.outcomes.of(args.preset, args.policy);
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
    preset: args.preset,
    reasons,
    payload,
    tenant_id: claims.tenant_id,
    key_id: claims.key_id,
    receipt_id: null,
    protect_receipt_id: null,
    kind: "simulation" as const,
    signature,
  };
}
