import type { Condition, PolicyDocument, ProtectInput } from "./policy.ts";

export type Decision = "ALLOWED" | "DENIED";

// Receipts promise that the same input under the same policy gives the same answer, so this
// module reads only its arguments: no clock, no I/O, no randomness, no mutation.
export function decide(
  input: ProtectInput,
  policy: PolicyDocument,
): { decision: Decision; reasons: string[]; rule: string | null } {
  const rule = policy.rules.find((r) => matches(r.when, input));
  const effect = rule ? rule.effect : policy.default_effect;
  const reason = rule ? rule.reason : policy.default_reason;
  // The deciding rule's id (null: the default) goes into the payload, so a receipt says which rule spoke.
  return { decision: effect === "allow" ? "ALLOWED" : "DENIED", reasons: [reason], rule: rule ? rule.id : null };
}

// Every field present in the condition must hold; an empty condition matches everything.
function matches(when: Condition, input: ProtectInput): boolean {
  if (when.actions && !when.actions.some((p) => matchPattern(p, input.action))) return false;
  if (when.resources) {
    const resource = input.resource;
    if (resource === undefined || !when.resources.some((p) => matchPattern(p, resource))) return false;
  }
  // A missing amount fails both bounds: a limit rule must not be dodged by leaving it out.
  if (when.amount_above !== undefined && !(typeof input.amount === "number" && input.amount > when.amount_above)) {
    return false;
  }
  if (
    when.amount_at_most !== undefined &&
    !(typeof input.amount === "number" && input.amount <= when.amount_at_most)
  ) {
    return false;
  }
  if (when.currencies && (input.currency === undefined || !when.currencies.includes(input.currency))) return false;
  if (when.context) {
    const ctx = input.context ?? {};
    for (const [key, want] of Object.entries(when.context)) {
      // Own keys only, strict equality: "true" is not true, and "constructor" is not inherited.
      if (!Object.hasOwn(ctx, key) || ctx[key] !== want) return false;
    }
  }
  return true;
}

// A trailing `*` makes a prefix match; anything else is compared exactly.
function matchPattern(pattern: string, value: string): boolean {
  return pattern.endsWith("*") ? value.startsWith(pattern.slice(0, -1)) : value === pattern;
}
