import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import fc from "fast-check";
import { actionAllowable, decide } from "../../src/decide/engine.ts";
import {
  DEFAULT_POLICY,
  DEFAULT_POLICY_REF,
  PolicyDocument,
  ProtectInput,
  policyHash,
  readsKeys,
  type Condition,
} from "../../src/decide/policy.ts";
import { PRESETS, presetNames } from "../../src/simulation/presets.ts";
import { buildPayload } from "../../src/decide/payload.ts";

// Listed by hand on purpose: changing DEFAULT_POLICY or a preset must make this table fail.
const EXPECTED: Record<string, [decision: "ALLOWED" | "DENIED", reason: string, rule: string | null]> = {
  small_payment: ["ALLOWED", "payment_within_limit", "allow_payment_within_limit"],
  large_payment: ["DENIED", "amount_over_limit", "deny_payment_over_limit"],
  foreign_currency_payment: ["DENIED", "currency_not_allowed", "deny_payment_currency"],
  read_document: ["ALLOWED", "read_only", "allow_document_read"],
  drop_production_database: ["DENIED", "destructive_action", "deny_database_drop"],
  delete_production_records: ["DENIED", "destructive_action_in_production", "deny_production_delete"],
  shell_command: ["DENIED", "shell_execution_forbidden", "deny_shell_exec"],
  send_email: ["ALLOWED", "email_allowed", "allow_email_send"],
  bulk_email: ["DENIED", "bulk_email_forbidden", "deny_bulk_email"],
  deploy_staging: ["ALLOWED", "staging_deploy", "allow_deploy_staging"],
  deploy_production_unapproved: ["DENIED", "approval_required", "deny_deploy_production_unapproved"],
  deploy_production_approved: ["ALLOWED", "deploy_approved", "allow_deploy_production_approved"],
  unknown_action: ["DENIED", "no_rule_matched", null],
};

// Receipts name the default policy by (pol_default, 1) and this hash; editing the document
// without a new version would make old receipts unverifiable.
const DEFAULT_POLICY_HASH = "0x97e8047b0a1556c4292c2ee2c2bc3b4559d07421f66744488af358a3998a334a";

function policyOf(conditions: Condition[], defaultEffect: "allow" | "deny" = "deny"): PolicyDocument {
  return {
    default_effect: defaultEffect,
    default_reason: "fallback",
    rules: conditions.map((when, i) => ({ id: `r${i}`, effect: "allow", reason: `rule_${i}`, when })),
  };
}

// Whether a single-rule policy with this condition matches the input.
function holds(when: Condition, input: ProtectInput): boolean {
  return decide(input, policyOf([when])).reasons[0] === "rule_0";
}

describe("presets under DEFAULT_POLICY", () => {
  test("the expectation table names exactly the presets", () => {
    expect(presetNames()).toEqual(Object.keys(EXPECTED).sort());
  });

  test.each(Object.entries(EXPECTED))("%s -> %p", (name, [decision, reason, rule]) => {
    expect(decide(PRESETS[name].input, DEFAULT_POLICY)).toEqual({ decision, reasons: [reason], rule });
  });

  test("cover both outcomes, at least four of each", () => {
    const outcomes = Object.values(EXPECTED).map(([d]) => d);
    expect(outcomes.filter((d) => d === "ALLOWED").length).toBeGreaterThanOrEqual(4);
    expect(outcomes.filter((d) => d === "DENIED").length).toBeGreaterThanOrEqual(4);
  });

  test("names are snake_case and sorted", () => {
    const names = presetNames();
    for (const name of names) expect(name).toMatch(/^[a-z0-9_]+$/);
    expect(names).toEqual([...names].sort());
  });

  test("every preset input is a valid ProtectInput", () => {
    for (const name of presetNames()) expect([name, Value.Check(ProtectInput, PRESETS[name].input)]).toEqual([name, true]);
  });

  test("presets cannot be altered at run time", () => {
    expect(() => {
      (PRESETS.small_payment.input as { amount?: number }).amount = 1;
    }).toThrow();
    expect(PRESETS.small_payment.input.amount).toBe(250);
  });
});

describe("DEFAULT_POLICY", () => {
  test("validates against PolicyDocument", () => {
    expect([...Value.Errors(PolicyDocument, DEFAULT_POLICY)]).toEqual([]);
    expect(Value.Check(PolicyDocument, DEFAULT_POLICY)).toBe(true);
  });

  test("denies by default", () => {
    expect(DEFAULT_POLICY.default_effect).toBe("deny");
    expect(DEFAULT_POLICY.default_reason).toBe("no_rule_matched");
  });

  test("rule ids are unique", () => {
    const ids = DEFAULT_POLICY.rules.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("version 1 keeps its hash", async () => {
    expect(DEFAULT_POLICY_REF).toEqual({ policy_id: "pol_default", version: 1 });
    expect(await policyHash(DEFAULT_POLICY)).toBe(DEFAULT_POLICY_HASH);
  });

  test("cannot be altered at run time", () => {
    expect(() => {
      (DEFAULT_POLICY.rules as unknown[]).pop();
    }).toThrow();
  });

  test.each([
    ["payment exactly at the limit", { action: "payment.send", amount: 1000, currency: "EUR" }, "ALLOWED", "payment_within_limit"],
    ["payment just above the limit", { action: "payment.send", amount: 1000.01, currency: "GBP" }, "DENIED", "amount_over_limit"],
    ["payment without amount", { action: "payment.send", currency: "USD" }, "DENIED", "amount_required"],
    ["payment without currency", { action: "payment.send", amount: 5 }, "DENIED", "currency_not_allowed"],
    ["large refund", { action: "payment.refund", amount: 5000, currency: "USD" }, "DENIED", "amount_over_limit"],
    ["delete outside prod", { action: "record.delete", resource: "staging/db" }, "DENIED", "no_rule_matched"],
    ["shell with approval", { action: "shell.exec", context: { approved: true } }, "DENIED", "shell_execution_forbidden"],
    ["bulk email as a string", { action: "email.send", context: { bulk: "true" } }, "ALLOWED", "email_allowed"],
    ["prod deploy approved as a string", { action: "deploy", resource: "prod/web", context: { approved: "true" } }, "DENIED", "approval_required"],
    ["deploy elsewhere", { action: "deploy", resource: "dev/web" }, "DENIED", "no_rule_matched"],
    ["deploy without resource", { action: "deploy" }, "DENIED", "no_rule_matched"],
    ["secret read", { action: "secrets.read", resource: "vault/api" }, "DENIED", "secret_access_forbidden"],
  ] as [string, ProtectInput, string, string][])("%s", (_label, input, decision, reason) => {
    expect(Value.Check(ProtectInput, input)).toBe(true);
    expect(decide(input, DEFAULT_POLICY)).toMatchObject({ decision: decision as "ALLOWED" | "DENIED", reasons: [reason] });
  });
});

describe("decide", () => {
  test("is deterministic and does not mutate its arguments", () => {
    const input: ProtectInput = { action: "payment.send", amount: 10, currency: "USD", context: { a: 1 } };
    const policy = structuredClone(DEFAULT_POLICY);
    const inputCopy = structuredClone(input);
    const policyCopy = structuredClone(policy);
    const first = decide(input, policy);
    const second = decide(input, policy);
    expect(second).toEqual(first);
    expect(second).not.toBe(first);
    expect(input).toEqual(inputCopy);
    expect(policy).toEqual(policyCopy);
  });

  test("returns a fresh reasons array each time", () => {
    const first = decide({ action: "x" }, DEFAULT_POLICY);
    first.reasons.push("tampered");
    expect(decide({ action: "x" }, DEFAULT_POLICY).reasons).toEqual(["no_rule_matched"]);
  });

  test("first matching rule wins", () => {
    const policy: PolicyDocument = {
      default_effect: "allow",
      default_reason: "fallback",
      rules: [
        { id: "a", effect: "deny", reason: "first", when: { actions: ["deploy"] } },
        { id: "b", effect: "allow", reason: "second", when: { actions: ["deploy"] } },
        { id: "c", effect: "deny", reason: "third", when: {} },
      ],
    };
    expect(decide({ action: "deploy" }, policy)).toEqual({ decision: "DENIED", reasons: ["first"], rule: "a" });
    expect(decide({ action: "other" }, policy)).toEqual({ decision: "DENIED", reasons: ["third"], rule: "c" });
    const swapped = { ...policy, rules: [policy.rules[1], policy.rules[0]] };
    expect(decide({ action: "deploy" }, swapped)).toEqual({ decision: "ALLOWED", reasons: ["second"], rule: "b" });
  });

  test("an empty policy uses its default", () => {
    expect(decide({ action: "anything" }, { default_effect: "allow", default_reason: "open", rules: [] })).toEqual({
      decision: "ALLOWED",
      reasons: ["open"],
      rule: null,
    });
    expect(decide({ action: "anything" }, { default_effect: "deny", default_reason: "closed", rules: [] })).toEqual({
      decision: "DENIED",
      reasons: ["closed"],
      rule: null,
    });
  });

  test("an empty condition matches everything", () => {
    expect(holds({}, { action: "a" })).toBe(true);
  });

  test("actions: exact unless the entry ends in *", () => {
    expect(holds({ actions: ["email.send"] }, { action: "email.send" })).toBe(true);
    expect(holds({ actions: ["email.send"] }, { action: "email.sendall" })).toBe(false);
    expect(holds({ actions: ["email.send"] }, { action: "email" })).toBe(false);
    expect(holds({ actions: ["email.*"] }, { action: "email.send" })).toBe(true);
    expect(holds({ actions: ["email.*"] }, { action: "email." })).toBe(true);
    expect(holds({ actions: ["email.*"] }, { action: "emailx" })).toBe(false);
    expect(holds({ actions: ["*"] }, { action: "anything" })).toBe(true);
    expect(holds({ actions: ["a", "b"] }, { action: "b" })).toBe(true);
  });

  test("resources: prefix or exact, and a missing resource fails", () => {
    expect(holds({ resources: ["prod/*"] }, { action: "a", resource: "prod/db" })).toBe(true);
    expect(holds({ resources: ["prod/*"] }, { action: "a", resource: "production/db" })).toBe(false);
    expect(holds({ resources: ["prod/db"] }, { action: "a", resource: "prod/db/x" })).toBe(false);
    expect(holds({ resources: ["prod/*"] }, { action: "a" })).toBe(false);
    // `*` only has meaning at the end.
    expect(holds({ resources: ["*/db"] }, { action: "a", resource: "prod/db" })).toBe(false);
  });

  test("amount and currency take operators; a missing field fails them", () => {
    expect(holds({ amount: { gt: 100 } }, { action: "a", amount: 100.000001 })).toBe(true);
    expect(holds({ amount: { gt: 100 } }, { action: "a", amount: 100 })).toBe(false);
    expect(holds({ amount: { gt: 100 } }, { action: "a" })).toBe(false);
    expect(holds({ amount: { gt: 10, lte: 20 } }, { action: "a", amount: 20 })).toBe(true);
    expect(holds({ amount: { gt: 10, lte: 20 } }, { action: "a", amount: 10 })).toBe(false);
    expect(holds({ currency: { in: ["USD", "EUR"] } }, { action: "a", currency: "EUR" })).toBe(true);
    expect(holds({ currency: { in: ["USD", "EUR"] } }, { action: "a", currency: "JPY" })).toBe(false);
    expect(holds({ currency: { not_in: ["USD"] } }, { action: "a" })).toBe(false);
  });

  test("context: every named value satisfies its operator, strictly typed", () => {
    const when: Condition = { context: { approved: { eq: true }, level: { gte: 2 }, team: { prefix: "ops" } } };
    expect(holds(when, { action: "a", context: { approved: true, level: 2, team: "ops-eu", extra: "x" } })).toBe(true);
    expect(holds(when, { action: "a", context: { approved: "true", level: 2, team: "ops" } })).toBe(false);
    expect(holds(when, { action: "a", context: { approved: true, level: "2", team: "ops" } })).toBe(false);
    expect(holds(when, { action: "a", context: { approved: true, level: 2 } })).toBe(false);
    expect(holds(when, { action: "a" })).toBe(false);
  });

  test("context values are never inherited", () => {
    const inherited = Object.create({ approved: true }) as Record<string, boolean>;
    expect(holds({ context: { approved: { eq: true } } }, { action: "a", context: inherited })).toBe(false);
    expect(holds({ context: { approved: { exists: false } } }, { action: "a", context: inherited })).toBe(true);
  });

  test("keys: the calling key must be listed; a session is no key", () => {
    const when: Condition = { keys: ["key_bot1"] };
    const policy = policyOf([when]);
    expect(decide({ action: "a" }, policy, { key_id: "key_bot1" }).rule).toBe("r0");
    expect(decide({ action: "a" }, policy, { key_id: "key_bot2" }).rule).toBe(null);
    expect(decide({ action: "a" }, policy).rule).toBe(null);
    expect(readsKeys(policy)).toBe(true);
    expect(readsKeys(DEFAULT_POLICY)).toBe(false);
  });

  test("all present fields must hold", () => {
    const when: Condition = { actions: ["payment.*"], currency: { eq: "USD" }, amount: { lte: 50 } };
    expect(holds(when, { action: "payment.send", currency: "USD", amount: 50 })).toBe(true);
    expect(holds(when, { action: "payment.send", currency: "EUR", amount: 50 })).toBe(false);
    expect(holds(when, { action: "transfer", currency: "USD", amount: 50 })).toBe(false);
    expect(holds(when, { action: "payment.send", currency: "USD", amount: 51 })).toBe(false);
  });
});

describe("actionAllowable: could some input with this action pass?", () => {
  const doc = (rules: unknown[], default_effect = "deny") => ({ default_effect, default_reason: "default", rules }) as PolicyDocument;
  const rule = (id: string, effect: string, when: Condition) => ({ id, effect, reason: id, when });

  test("an allow or approval rule under conditions on the arguments keeps the action (small payments pass)", () => {
    const policy = doc([rule("big", "deny", { actions: ["mcp.pay.send"], context: { amount: { gt: 100 } } }), rule("small", "allow", { actions: ["mcp.pay.send"], context: { amount: { lte: 100 } } })]);
    expect(actionAllowable("mcp.pay.send", policy)).toBe(true);
    // No allow rule names this action, and the default denies.
    expect(actionAllowable("mcp.pay.refund", policy)).toBe(false);
    expect(actionAllowable("mcp.x.y", doc([rule("held", "require_approval", { actions: ["mcp.x.*"], resources: ["r"] })]))).toBe(true);
  });

  test("a deny with no condition but its actions takes every input: nothing after it is reached", () => {
    const policy = doc([rule("never", "deny", { actions: ["mcp.fs.*"] }), rule("reads", "allow", { actions: ["mcp.fs.read"] })], "allow");
    expect(actionAllowable("mcp.fs.read", policy)).toBe(false);
    expect(actionAllowable("mcp.other.read", policy)).toBe(true); // the default allows
    expect(actionAllowable("mcp.fs.read", doc([rule("all", "deny", {})], "allow"))).toBe(false);
  });

  test("a deny under a condition (arguments, usage) does not take every input; the default decides the rest", () => {
    const usage = { sum: "count", per: "key", window: "day", gt: 5 } as Condition["usage"];
    expect(actionAllowable("a.b", doc([rule("cap", "deny", { actions: ["a.b"], usage })], "allow"))).toBe(true);
    expect(actionAllowable("a.b", doc([rule("cap", "deny", { actions: ["a.b"], context: { x: { exists: true } } })], "allow"))).toBe(true);
    expect(actionAllowable("a.b", doc([rule("cap", "deny", { actions: ["a.b"], amount: { gt: 1 } })], "deny"))).toBe(false);
  });

  test("keys: a rule for other keys is never reached; one for this key holds", () => {
    const policy = doc([rule("mine", "deny", { keys: ["key_mine"] }), rule("others", "allow", { keys: ["key_other"] })], "allow");
    expect(actionAllowable("a.b", policy, { key_id: "key_mine" })).toBe(false);
    expect(actionAllowable("a.b", policy, { key_id: "key_third" })).toBe(true);
    expect(actionAllowable("a.b", doc([rule("others", "allow", { keys: ["key_other"] })]), { key_id: "key_mine" })).toBe(false);
    expect(actionAllowable("a.b", doc([rule("others", "allow", { keys: ["key_other"] })]), { key_id: null })).toBe(false);
  });

  test("sound: whenever it says no input passes, decide() denies every input without approval (random policies)", () => {
    const when = fc.record(
      {
        actions: fc.constantFrom(["a.b"], ["a.*"], ["c.d"], ["a.b", "c.d"]),
        keys: fc.constantFrom(["key_a"], ["key_b"]),
        context: fc.constantFrom({ x: { eq: 1 } }, { x: { exists: false } }),
        amount: fc.constantFrom({ gt: 5 }, { lte: 5 }),
        usage: fc.constant({ sum: "count", per: "key", window: "day", lte: 1 }),
      },
      { requiredKeys: [] },
    );
    const policies = fc.record({
      rules: fc.array(fc.record({ effect: fc.constantFrom("allow", "deny", "require_approval"), when }), { maxLength: 5 }),
      default_effect: fc.constantFrom("allow", "deny"),
    });
    const inputs = fc.record({ action: fc.constantFrom("a.b", "a.c", "c.d"), amount: fc.constantFrom(undefined, 1, 10), x: fc.constantFrom(undefined, 1, 2) });
    fc.assert(
      fc.property(policies, fc.array(inputs, { minLength: 1, maxLength: 10 }), fc.constantFrom("key_a", "key_b", null), (p, samples, key) => {
        const policy = doc(p.rules.map((r, i) => rule(`r${i}`, r.effect, r.when as Condition)), p.default_effect);
        for (const s of samples) {
          const input = { action: s.action, ...(s.amount === undefined ? {} : { amount: s.amount }), ...(s.x === undefined ? {} : { context: { x: s.x } }) };
          const verdict = decide(input, policy, { key_id: key });
          if (!actionAllowable(s.action, policy, { key_id: key })) expect({ decision: verdict.decision, approval: verdict.approval }).toEqual({ decision: "DENIED", approval: undefined });
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("schemas", () => {
  test("ProtectInput refuses malformed inputs", () => {
    const bad: unknown[] = [
      {},
      { action: "" },
      { action: "has space" },
      { action: "a".repeat(201) },
      { action: "a", extra: 1 },
      { action: "a", amount: -1 },
      { action: "a", amount: 1e16 },
      { action: "a", amount: Number.NaN },
      { action: "a", amount: Number.POSITIVE_INFINITY },
      { action: "a", currency: "usd" },
      { action: "a", resource: "r".repeat(501) },
      { action: "a", context: { "bad key": 1 } },
      { action: "a", context: { k: null } },
      { action: "a", context: { k: { nested: 1 } } },
      { action: "a", context: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])) },
    ];
    for (const input of bad) expect([input, Value.Check(ProtectInput, input)]).toEqual([input, false]);
    expect(Value.Check(ProtectInput, { action: "a:b/c-d_e.f", amount: 0, currency: "USD", context: { k: "v" } })).toBe(true);
  });

  test("PolicyDocument refuses malformed policies", () => {
    const rule = { id: "r", effect: "allow", reason: "x", when: {} };
    const doc = (rules: unknown[]) => ({ default_effect: "deny", default_reason: "d", rules });
    expect(Value.Check(PolicyDocument, doc([rule]))).toBe(true);
    const bad: unknown[] = [
      { ...doc([rule]), extra: 1 },
      { ...doc([rule]), default_effect: "maybe" },
      doc([{ ...rule, id: "Upper" }]),
      doc([{ ...rule, effect: "block" }]),
      doc([{ ...rule, when: { unknown: 1 } }]),
      doc([{ ...rule, when: { actions: ["*.delete"] } }]),
      doc([{ ...rule, when: { actions: [] } }]),
      doc([{ ...rule, extra: true }]),
      // v1 fields are gone.
      doc([{ ...rule, when: { amount_above: 1 } }]),
      doc([{ ...rule, when: { currencies: ["USD"] } }]),
      doc([{ ...rule, when: { context: { approved: true } } }]),
      // Operators are typed by their field, and an empty operator object is refused.
      doc([{ ...rule, when: { amount: { eq: "5" } } }]),
      doc([{ ...rule, when: { amount: { prefix: "1" } } }]),
      doc([{ ...rule, when: { currency: { gt: 1 } } }]),
      doc([{ ...rule, when: { currency: { eq: "usd" } } }]),
      doc([{ ...rule, when: { context: { k: {} } } }]),
      doc([{ ...rule, when: { context: { k: { like: "x" } } } }]),
      doc([{ ...rule, when: { context: { k: { gt: "1" } } } }]),
      doc([{ ...rule, when: { context: { k: { in: [] } } } }]),
      doc([{ ...rule, when: { keys: ["bot"] } }]),
      doc(Array.from({ length: 201 }, (_, i) => ({ ...rule, id: `r${i}` }))),
    ];
    for (const policy of bad) expect(Value.Check(PolicyDocument, policy)).toBe(false);
  });
});

describe("buildPayload", () => {
  const policy = { policy_id: "pol_default", version: 1, hash: DEFAULT_POLICY_HASH };
  const input: ProtectInput = { action: "deploy", resource: "staging/web" };

  test("has the documented shape, with preset and principal only when given", () => {
    const base = { input, policy, decision: "ALLOWED" as const, reasons: ["staging_deploy"], rule: "allow_staging_deploy" };
    expect(buildPayload({ ...base, kind: "protect" })).toEqual({ v: 2, kind: "protect", ...base });
    expect("preset" in buildPayload({ ...base, kind: "protect" })).toBe(false);
    expect("principal" in buildPayload({ ...base, kind: "protect" })).toBe(false);
    expect(buildPayload({ ...base, rule: null, kind: "simulation", preset: "deploy_staging" })).toEqual({
      v: 2,
      kind: "simulation",
      ...base,
      rule: null,
      preset: "deploy_staging",
    });
    const principal = { key_id: "key_abc", tenant_id: "cust_not_copied" } as { key_id: string };
    expect(buildPayload({ ...base, kind: "protect", principal })).toEqual({ v: 2, kind: "protect", ...base, principal: { key_id: "key_abc" } });
  });

  test("keeps only the policy reference fields", () => {
    const row = { ...policy, document: DEFAULT_POLICY } as typeof policy;
    const payload = buildPayload({ kind: "execute", input, policy: row, decision: "DENIED", reasons: ["x"], rule: null });
    expect(payload.policy).toEqual(policy);
  });
});
