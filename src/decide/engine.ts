import { canonicalJson } from "../crypto/canonical.ts";
import { sha256HexSync } from "../crypto/sync.ts";
import { resolveTerms, type Condition, type Op, type PolicyDocument, type ProtectInput, type ResolvedTerms, type Rule, type UsageOp } from "./policy.ts";

export type Decision = "ALLOWED" | "DENIED";

/**
 * What decided: the effect, its reason, and the id of the rule (null: the default effect). A
 * require_approval rule decides DENIED, so a client that knows nothing of approvals fails closed,
 * and names the terms under which people may approve the action instead (`approval`).
 */
export type Verdict = { decision: Decision; reasons: string[]; rule: string | null; approval?: ResolvedTerms; usage?: UsageFact[] };

/** A fact a usage condition read: its rule, the window it counted, and the total before this request. */
export type UsageFact = { rule: string; window_start: string; before: number };

/** The usage facts a decision may read, by rule id (a rule without one counts from 0). */
export type UsageFacts = ReadonlyMap<string, { window_start: string; before: number }>;

/** Who asked, as far as a policy may read it: the API key (null when a session asked). */
export type Caller = { key_id: string | null };

type Value = string | number | boolean | undefined;

// Receipts promise that the same input under the same policy gives the same answer, so this
// module reads only its arguments: no clock, no I/O, no randomness, no mutation.
export function decide(input: ProtectInput, policy: PolicyDocument, caller: Caller = { key_id: null }, facts?: UsageFacts): Verdict {
  // Each usage condition reached is a fact of the decision: named in the payload, so the decision
  // stays a pure function of it.
  const read: UsageFact[] = [];
  const rule = policy.rules.find((r) => {
    if (!matches(r.when, input, caller)) return false;
    if (!r.when.usage) return true;
    const fact = facts?.get(r.id) ?? { window_start: "", before: 0 };
    read.push({ rule: r.id, window_start: fact.window_start, before: fact.before });
    return usageHolds(r.when.usage, fact.before + usageOf(r.when.usage, input));
  });
  const usage = read.length > 0 ? { usage: read } : {};
  if (!rule) return { decision: toDecision(policy.default_effect), reasons: [policy.default_reason], rule: null, ...usage };
  if (rule.effect === "require_approval") return { decision: "DENIED", reasons: [rule.reason], rule: rule.id, approval: resolveTerms(rule.approval), ...usage };
  return { decision: toDecision(rule.effect), reasons: [rule.reason], rule: rule.id, ...usage };
}

/** What this request adds to a usage condition's total: 1, or its amount. */
export function usageOf(op: UsageOp, input: ProtectInput): number {
  return op.sum === "count" ? 1 : (input.amount ?? 0);
}

function usageHolds(op: UsageOp, total: number): boolean {
  if (op.gt !== undefined && !(total > op.gt)) return false;
  if (op.gte !== undefined && !(total >= op.gte)) return false;
  if (op.lt !== undefined && !(total < op.lt)) return false;
  if (op.lte !== undefined && !(total <= op.lte)) return false;
  return true;
}

/** Where a usage window starts (UTC) for an instant: the minute, hour, day or month it falls in. */
export function windowStart(window: UsageOp["window"], at: string): string {
  const d = new Date(at);
  const parts = [d.getUTCFullYear(), d.getUTCMonth(), window === "month" ? 1 : d.getUTCDate(), window === "hour" || window === "minute" ? d.getUTCHours() : 0, window === "minute" ? d.getUTCMinutes() : 0] as const;
  return new Date(Date.UTC(parts[0], parts[1], parts[2], parts[3], parts[4])).toISOString();
}

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
export function usageNeeds(input: ProtectInput, policy: PolicyDocument, caller: Caller, at: string): UsageNeed[] {
  const needs: UsageNeed[] = [];
  for (const r of policy.rules) {
    const u = r.when.usage;
    if (!u || !matches(r.when, input, caller)) continue;
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

const toDecision = (effect: "allow" | "deny"): Decision => (effect === "allow" ? "ALLOWED" : "DENIED");

/**
 * Whether some input with this action (any resource, amount, currency, context, usage) could be
 * ALLOWED or held for approval under the policy, for this caller: false only when every such input
 * is denied. Conservative: a rule that allows or asks for approval under conditions on the rest
 * of the input counts as reachable, even when no value could satisfy them; a deny rule decides
 * every input only when nothing but its actions and keys restricts it (docs/policy.md).
 */
export function actionAllowable(action: string, policy: PolicyDocument, caller: Caller = { key_id: null }): boolean {
  for (const r of policy.rules) {
    const { actions, keys, ...rest } = r.when;
    if (actions && !actions.some((p) => matchPattern(p, action))) continue;
    if (keys && (caller.key_id === null || !keys.includes(caller.key_id))) continue;
    if (r.effect !== "deny") return true;
    // A deny with no other condition takes every input with this action: no later rule is reached.
    if (Object.values(rest).every((v) => v === undefined)) return false;
  }
  return policy.default_effect === "allow";
}

// Every field present in the condition must hold; an empty condition matches everything.
function matches(when: Condition, input: ProtectInput, caller: Caller): boolean {
  if (when.actions && !when.actions.some((p) => matchPattern(p, input.action))) return false;
  if (when.resources) {
    const resource = input.resource;
    if (resource === undefined || !when.resources.some((p) => matchPattern(p, resource))) return false;
  }
  // A session (no key) is none of the listed keys.
  if (when.keys && (caller.key_id === null || !when.keys.includes(caller.key_id))) return false;
  if (when.amount && !holds(when.amount, input.amount)) return false;
  if (when.currency && !holds(when.currency, input.currency)) return false;
  if (when.context) {
    const ctx = input.context ?? {};
    for (const [name, op] of Object.entries(when.context)) {
      // Own keys only: "constructor" is never an inherited value.
      if (!holds(op, Object.hasOwn(ctx, name) ? ctx[name] : undefined)) return false;
    }
  }
  return true;
}

/**
 * Every operator in `op` holds for `value`. Types are strict ("5" is not 5, bounds need a number,
 * prefix a string), and a missing value fails everything but `exists: false`: a limit must not be
 * dodged by leaving the field out, so `ne` and `not_in` fail on it too.
 */
export function holds(op: Op, value: Value): boolean {
  if (op.exists !== undefined && op.exists !== (value !== undefined)) return false;
  const others = Object.keys(op).length - (op.exists === undefined ? 0 : 1);
  if (others === 0) return true;
  if (value === undefined) return false;
  if (op.eq !== undefined && value !== op.eq) return false;
  if (op.ne !== undefined && value === op.ne) return false;
  if (op.in !== undefined && !op.in.includes(value)) return false;
  if (op.not_in !== undefined && op.not_in.includes(value)) return false;
  if (op.prefix !== undefined && !(typeof value === "string" && value.startsWith(op.prefix))) return false;
  if (op.gt !== undefined && !(typeof value === "number" && value > op.gt)) return false;
  if (op.gte !== undefined && !(typeof value === "number" && value >= op.gte)) return false;
  if (op.lt !== undefined && !(typeof value === "number" && value < op.lt)) return false;
  if (op.lte !== undefined && !(typeof value === "number" && value <= op.lte)) return false;
  return true;
}

// A trailing `*` makes a prefix match; anything else is compared exactly.
function matchPattern(pattern: string, value: string): boolean {
  return pattern.endsWith("*") ? value.startsWith(pattern.slice(0, -1)) : value === pattern;
}
