import { resolveTerms, type Condition, type Op, type PolicyDocument, type ProtectInput, type ResolvedTerms } from "./policy.ts";

export type Decision = "ALLOWED" | "DENIED";

/**
 * What decided: the effect, its reason, and the id of the rule (null: the default effect). A
 * require_approval rule decides DENIED, so a client that knows nothing of approvals fails closed,
 * and names the terms under which people may approve the action instead (`approval`).
 */
export type Verdict = { decision: Decision; reasons: string[]; rule: string | null; approval?: ResolvedTerms };

/** Who asked, as far as a policy may read it: the API key (null when a session asked). */
export type Caller = { key_id: string | null };

type Value = string | number | boolean | undefined;

// Receipts promise that the same input under the same policy gives the same answer, so this
// module reads only its arguments: no clock, no I/O, no randomness, no mutation.
export function decide(input: ProtectInput, policy: PolicyDocument, caller: Caller = { key_id: null }): Verdict {
  const rule = policy.rules.find((r) => matches(r.when, input, caller));
  if (!rule) return { decision: toDecision(policy.default_effect), reasons: [policy.default_reason], rule: null };
  if (rule.effect === "require_approval") return { decision: "DENIED", reasons: [rule.reason], rule: rule.id, approval: resolveTerms(rule.approval) };
  return { decision: toDecision(rule.effect), reasons: [rule.reason], rule: rule.id };
}

const toDecision = (effect: "allow" | "deny"): Decision => (effect === "allow" ? "ALLOWED" : "DENIED");

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
