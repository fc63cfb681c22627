// A dry run of a named preset: the pure decision, its payload and hash, and the signed claims.
import { canonicalJson } from "../receipts/canonical.ts";
import { sha256HexSync } from "../receipts/fast-crypto.ts";
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

export async function simulatePreset(args: {
  preset: string;
  policy: ActivePolicy;
  requestId: string;
  tenantId: string;
  timestamp: string;
  signer: ReceiptSigner;
}) {
  const preset = Object.hasOwn(PRESETS, args.preset) ? PRESETS[args.preset] : undefined;
  if (!preset) throw new AppError("invalid_preset", "Unknown preset; GET /v1/presets lists them.");
  const { decision, reasons } = decide(preset.input, args.policy.document);
  const payload = buildPayload({ kind: "simulation", input: preset.input, policy: args.policy.ref, decision, reasons, preset: args.preset });
  const content_hash = sha256HexSync(canonicalJson(payload));
  const signature = await args.signer.sign({
    content_hash,
    request_id: args.requestId,
    tenant_id: args.tenantId,
    timestamp: args.timestamp,
    kind: payload.kind,
  });
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
    signature,
  };
}
