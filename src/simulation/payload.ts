import type { Decision } from "./engine.ts";
import type { ProtectInput } from "./policy.ts";

export type PolicyRef = { policy_id: string; version: number; hash: string };
/** A draft simulated with a session: never stored, so it has no id or version, only its hash. */
export type DraftRef = { policy_id: "draft"; version: null; hash: string };
export type PayloadKind = "simulation" | "protect" | "execute";

export type ResultPayload = {
  v: 2;
  kind: PayloadKind;
  input: ProtectInput;
  policy: PolicyRef | DraftRef;
  decision: Decision;
  reasons: string[];
  /** The id of the rule that decided; null for the policy's default. */
  rule: string | null;
  /** The calling key, only when it was a fact of the decision (a rule with a `keys` condition). */
  principal?: { key_id: string | null };
  preset?: string;
};

// The deterministic part of a result (CONTRACT section 4): content_hash covers exactly this, so
// nothing per-request (request id, time, tenant) may enter it, nor the key unless it decided.
export function buildPayload(args: {
  kind: PayloadKind;
  input: ProtectInput;
  policy: PolicyRef | DraftRef;
  decision: Decision;
  reasons: string[];
  rule: string | null;
  principal?: { key_id: string | null };
  preset?: string;
}): ResultPayload {
  const { kind, input, policy, decision, reasons, rule, principal, preset } = args;
  // Copy only the three reference fields: a whole policy row must not leak into the hash.
  const ref = { policy_id: policy.policy_id, version: policy.version, hash: policy.hash } as PolicyRef | DraftRef;
  const payload: ResultPayload = { v: 2, kind, input, policy: ref, decision, reasons, rule };
  // Absent rather than undefined or null, so the hash does not depend on how "none" is spelt.
  if (principal !== undefined) payload.principal = { key_id: principal.key_id };
  if (preset !== undefined) payload.preset = preset;
  return payload;
}
