// What changed between two policy documents, rule by rule (`warden policy diff A B`; docs/policy.md).
import { canonicalJson } from "../crypto/canonical.ts";
import type { PolicyDocument } from "../decide/policy.ts";

export interface PolicyDiff {
  /** The default effect and reason of each side, when they differ; null when the same. */
  default: { before: { effect: string; reason: string }; after: { effect: string; reason: string } } | null;
  /** Rule ids only in B, only in A, and in both with a different effect, reason or condition. */
  added: string[];
  removed: string[];
  changed: string[];
  /** Whether the rules both sides have come in another order (the first match decides, so order matters). */
  reordered: boolean;
  same: boolean;
}

/** Rules are matched by id; a rule renamed counts as one removed and one added. */
export function diffPolicies(a: PolicyDocument, b: PolicyDocument): PolicyDiff {
  const before = new Map(a.rules.map((r) => [r.id, r]));
  const after = new Map(b.rules.map((r) => [r.id, r]));
  const added = b.rules.filter((r) => !before.has(r.id)).map((r) => r.id);
  const removed = a.rules.filter((r) => !after.has(r.id)).map((r) => r.id);
  const changed = b.rules.filter((r) => before.has(r.id) && canonicalJson(before.get(r.id)) !== canonicalJson(r)).map((r) => r.id);
  const commonA = a.rules.filter((r) => after.has(r.id)).map((r) => r.id);
  const commonB = b.rules.filter((r) => before.has(r.id)).map((r) => r.id);
  const reordered = commonA.some((id, i) => commonB[i] !== id);
  const sameDefault = a.default_effect === b.default_effect && a.default_reason === b.default_reason;
  const defaults = sameDefault
    ? null
    : { before: { effect: a.default_effect, reason: a.default_reason }, after: { effect: b.default_effect, reason: b.default_reason } };
  return { default: defaults, added, removed, changed, reordered, same: sameDefault && !added.length && !removed.length && !changed.length && !reordered };
}
