import type { Decision } from "./engine.ts";
import type { ProtectInput } from "./policy.ts";

export type PolicyRef = { policy_id: string; version: number; hash: string };
/** A draft simulated with a session: never stored, so it has no id or version, only its hash. */
export type DraftRef = { policy_id: "draft"; version: null; hash: string };
export type PayloadKind = "simulation" | "protect" | "execute";

export type ResultPayload = {
  v: 1;
  kind: PayloadKind;
  input: ProtectInput;
  policy: PolicyRef | DraftRef;
  decision: Decision;
  reasons: string[];
  preset?: string;
};

// The deterministic part of a result (CONTRACT section 4): content_hash covers exactly this, so
// nothing per-request (request id, time, key, tenant) may enter it.
export function buildPayload(args: {
  kind: PayloadKind;
  input: ProtectInput;
  policy: PolicyRef | DraftRef;
  decision: Decision;
  reasons: string[];
  preset?: string;
}): ResultPayload {
  const { kind, input, policy, decision, reasons, preset } = args;
  // Copy only the three reference fields: a whole policy row must not leak into the hash.
  const ref = { policy_id: policy.policy_id, version: policy.version, hash: policy.hash } as PolicyRef | DraftRef;
  const payload: ResultPayload = { v: 1, kind, input, policy: ref, decision, reasons };
  // Absent rather than undefined or null, so the hash does not depend on how "no preset" is spelt.
  if (preset !== undefined) payload.preset = preset;
  return payload;
}
