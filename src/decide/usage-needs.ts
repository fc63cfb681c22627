// The usage counters a protect reads and adds to (docs/policy.md, "Budgets and rate windows"),
// apart from decide() because a counter's identity is a hash made with node:crypto, while the
// decision itself (./engine.ts) runs on web-standard APIs too (the SDK decides again offline).
import { canonicalJson } from "../crypto/canonical.ts";
import { sha256HexSync } from "../crypto/sync.ts";
import { conditionsOf, usageOf, windowStart, type Caller } from "./engine.ts";
import type { EntityFacts } from "./entities.ts";
import type { PolicyDocument, ProtectInput, Rule } from "./policy.ts";

/** One counter a protect reads and, when ALLOWED, adds to: a usage rule whose other conditions hold. */
export interface UsageNeed {
  rule: string;
  /** The counter's identity: the rule's id and a hash of its conditions and usage measure (not its bound, so a changed budget keeps counting). */
  counter: string;
  /** The calling key (per key) or "*" (per tenant). */
  scope: string;
  window_start: string;
  add: number;
}

/** Every usage rule of the policy whose other conditions hold for this input, at this instant. */
export function usageNeeds(input: ProtectInput, policy: PolicyDocument, caller: Caller, at: string, entities?: EntityFacts): UsageNeed[] {
  const needs: UsageNeed[] = [];
  const holds = conditionsOf(input, caller, entities);
  for (const r of policy.rules) {
    const u = r.when.usage;
    if (!u || !holds(r.when)) continue;
    needs.push({ rule: r.id, counter: counterOf(r), scope: u.per === "key" ? (caller.key_id ?? "*session") : "*", window_start: windowStart(u.window, at), add: usageOf(u, input) });
  }
  return needs;
}

/**
 * Counters by rule object, hashed once per policy document that is kept. Freshness: a document is
 * never changed once parsed (a policy version is immutable), so an entry never goes stale.
 */
const counterIds = new WeakMap<Rule, string>();

/** The counter of a usage rule: its id and a hash of its conditions and measure (not its bound). */
export function counterOf(r: Rule): string {
  let id = counterIds.get(r);
  if (id === undefined) {
    const { gt: _gt, gte: _gte, lt: _lt, lte: _lte, ...measure } = r.when.usage!;
    id = `${r.id}:${sha256HexSync(canonicalJson({ when: { ...r.when, usage: measure } })).slice(2, 18)}`;
    counterIds.set(r, id);
  }
  return id;
}

