// The policy language (docs/policy.md) and the input it decides on. src/decide/ is the decision
// core: the input, the policy language, decide() and the payload a receipt hashes. It imports
// nothing but src/crypto/ (test/app/layers.test.ts), so every capability can use it.
import { Type, type Static, type TProperties, type TSchema } from "@sinclair/typebox";
import { contentHash } from "../crypto/canonical.ts";

// Free-form facts about a request (who asked, is it approved, ...), tested by policy operators with strict types.
const ContextValues = Type.Record(
  Type.String({ pattern: "^[A-Za-z0-9_.-]{1,64}$" }),
  Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean()]),
  { maxProperties: 32, additionalProperties: false },
);

export const ProtectInput = Type.Object(
  {
    action: Type.String({ minLength: 1, maxLength: 200, pattern: "^[A-Za-z0-9_.:/-]+$" }),
    resource: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    // TypeBox numbers reject NaN and Infinity, so amount is always finite here.
    amount: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15 })),
    currency: Type.Optional(Type.String({ pattern: "^[A-Z]{3}$" })),
    context: Type.Optional(ContextValues),
  },
  { additionalProperties: false },
);
export type ProtectInput = Static<typeof ProtectInput>;

const Effect = Type.Union([Type.Literal("allow"), Type.Literal("deny")]);
// A rule may also hold the action for a person's approval (docs/policy.md, "Approvals"); the
// policy's default may not: nothing is approvable unless a rule says so.
const RuleEffect = Type.Union([Type.Literal("allow"), Type.Literal("deny"), Type.Literal("require_approval")]);
const Reason = Type.String({ minLength: 1, maxLength: 200 });

// `*` may only end an action pattern (prefix match); anywhere else it could never match an action.
export const ActionPattern = Type.String({ minLength: 1, maxLength: 200, pattern: "^[A-Za-z0-9_.:/-]*\\*?$" });
const ResourcePattern = Type.String({ minLength: 1, maxLength: 500 });
const KeyId = Type.String({ pattern: "^key_[A-Za-z0-9]{1,64}$" });
const Currency = Type.String({ pattern: "^[A-Z]{3}$" });
const Amount = Type.Number({ minimum: 0, maximum: 1e15 });
const ContextValue = Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean()]);

// Lists need at least one entry: an empty list would make a rule that silently never matches.
const list = <T extends TSchema>(item: T) => Type.Array(item, { minItems: 1, maxItems: 100 });

/**
 * One operator object (docs/policy.md): every operator it has must hold. `minProperties` refuses
 * `{}`, which would hold for anything and hide a typo'd operator name.
 */
function operators<T extends TSchema, E extends TProperties>(value: T, extra: E) {
  return Type.Object(
    {
      eq: Type.Optional(value),
      ne: Type.Optional(value),
      in: Type.Optional(list(value)),
      not_in: Type.Optional(list(value)),
      exists: Type.Optional(Type.Boolean()),
      ...extra,
    },
    { additionalProperties: false, minProperties: 1 },
  );
}

const Bounds = {
  gt: Type.Optional(Type.Number()),
  gte: Type.Optional(Type.Number()),
  lt: Type.Optional(Type.Number()),
  lte: Type.Optional(Type.Number()),
};
const Prefix = { prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) };

// Operators are typed by the field they test: `amount: {eq: "5"}` is refused when published
// instead of never matching. Context values may be any of the three types, so their operands may too.
export const AmountOp = operators(Amount, Bounds);
export const CurrencyOp = operators(Currency, Prefix);
export const ContextOp = operators(ContextValue, { ...Bounds, ...Prefix });
export type Op = Static<typeof ContextOp>;

/**
 * A usage condition (docs/policy.md, "Budgets and rate windows"): the count, or the sum of the
 * amount, of the ALLOWED protects of the tenant (per key: of the calling key) in the current UTC
 * window whose input satisfies every other condition of the same `when`, counting this request,
 * within the bounds.
 */
export const UsageOp = Type.Object(
  {
    sum: Type.Union([Type.Literal("amount"), Type.Literal("count")]),
    per: Type.Union([Type.Literal("key"), Type.Literal("tenant")]),
    window: Type.Union([Type.Literal("minute"), Type.Literal("hour"), Type.Literal("day"), Type.Literal("month")]),
    gt: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15 })),
    gte: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15 })),
    lt: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15 })),
    lte: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15 })),
  },
  { additionalProperties: false, minProperties: 4 },
);
export type UsageOp = Static<typeof UsageOp>;

export const Condition = Type.Object(
  {
    actions: Type.Optional(Type.Array(ActionPattern, { minItems: 1, maxItems: 50 })),
    resources: Type.Optional(Type.Array(ResourcePattern, { minItems: 1, maxItems: 50 })),
    keys: Type.Optional(Type.Array(KeyId, { minItems: 1, maxItems: 100 })),
    amount: Type.Optional(AmountOp),
    currency: Type.Optional(CurrencyOp),
    context: Type.Optional(
      Type.Record(Type.String({ pattern: "^[A-Za-z0-9_.-]{1,64}$" }), ContextOp, {
        minProperties: 1,
        maxProperties: 32,
        additionalProperties: false,
      }),
    ),
    usage: Type.Optional(UsageOp),
  },
  { additionalProperties: false },
);
export type Condition = Static<typeof Condition>;

/** The roles a tenant's members have (docs/api.md, "Teams"); the approvers' roles are named from them. */
export const MEMBER_ROLES = ["owner", "admin", "developer", "approver", "viewer"] as const;
const MemberRole = Type.Union([Type.Literal("owner"), Type.Literal("admin"), Type.Literal("developer"), Type.Literal("approver"), Type.Literal("viewer")]);

/**
 * The terms of a require_approval rule: how many distinct people (accounts, whatever their memberships) must approve, which roles may
 * vote, how long the request waits, and how long an approved action may then be executed. Every
 * bound is checked when the document is; the defaults below fill what the rule leaves out.
 */
export const ApprovalTerms = Type.Object(
  {
    quorum: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
    roles: Type.Optional(Type.Array(MemberRole, { minItems: 1, maxItems: 5, uniqueItems: true })),
    expires_in: Type.Optional(Type.Integer({ minimum: 60, maximum: 604_800 })),
    execute_within: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400 })),
  },
  { additionalProperties: false },
);
export type ApprovalTerms = Static<typeof ApprovalTerms>;
export type ResolvedTerms = Required<ApprovalTerms>;

export const APPROVAL_DEFAULTS: Readonly<ResolvedTerms> = deepFreeze<ResolvedTerms>({ quorum: 1, roles: ["owner", "admin", "approver"], expires_in: 3_600, execute_within: 900 });

/** A rule's terms with the defaults filled in, roles in a fixed order: what receipts carry. */
export function resolveTerms(terms: ApprovalTerms | undefined): ResolvedTerms {
  const roles = terms?.roles ?? APPROVAL_DEFAULTS.roles;
  return {
    quorum: terms?.quorum ?? APPROVAL_DEFAULTS.quorum,
    roles: MEMBER_ROLES.filter((r) => roles.includes(r)),
    expires_in: terms?.expires_in ?? APPROVAL_DEFAULTS.expires_in,
    execute_within: terms?.execute_within ?? APPROVAL_DEFAULTS.execute_within,
  };
}

export const Rule = Type.Object(
  {
    id: Type.String({ pattern: "^[a-z0-9][a-z0-9_.-]{0,63}$" }),
    effect: RuleEffect,
    reason: Reason,
    when: Condition,
    approval: Type.Optional(ApprovalTerms),
  },
  { additionalProperties: false },
);
export type Rule = Static<typeof Rule>;

/**
 * What the schema cannot say: approval terms belong to a require_approval rule only. The JSON path
 * under the document and a message, or undefined when the document is consistent.
 */
export function documentProblem(doc: PolicyDocument | undefined): { path: string; message: string } | undefined {
  if (doc === undefined) return undefined;
  for (const [i, r] of doc.rules.entries()) {
    const u = r.when.usage;
    if (!u) continue;
    if (u.gt === undefined && u.gte === undefined && u.lt === undefined && u.lte === undefined) {
      return { path: `rules/${i}/when/usage`, message: "a usage condition needs a bound: gt, gte, lt or lte" };
    }
    // A sum of amounts in several currencies means nothing: the rule must pin one.
    if (u.sum === "amount" && r.when.currency?.eq === undefined) {
      return { path: `rules/${i}/when/usage/sum`, message: 'a sum over amount needs a currency condition with eq in the same when ("currency": {"eq": "EUR"})' };
    }
  }
  const at = doc.rules.findIndex((r) => r.approval !== undefined && r.effect !== "require_approval");
  if (at >= 0) return { path: `rules/${at}/approval`, message: 'approval terms belong to a rule whose effect is "require_approval"' };
  return undefined;
}

export const PolicyDocument = Type.Object(
  {
    default_effect: Effect,
    default_reason: Reason,
    rules: Type.Array(Rule, { maxItems: 200 }),
  },
  { additionalProperties: false },
);
export type PolicyDocument = Static<typeof PolicyDocument>;

/** A stored policy version as receipts name it: its hash covers the document. */
export type PolicyRef = { policy_id: string; version: number; hash: string };
/** A draft simulated with a session: never stored, so it has no id or version, only its hash. */
export type DraftRef = { policy_id: "draft"; version: null; hash: string };

/** A stored version (or the built-in default) with its document. */
export interface ActivePolicy {
  ref: PolicyRef;
  document: PolicyDocument;
}

/** A policy a simulation may decide under: a stored version, or a session's unsaved draft. */
export interface SimulatedPolicy {
  ref: PolicyRef | DraftRef;
  document: PolicyDocument;
}

/** Whether decisions under this document read the calling key (then the payload names it). */
export function readsKeys(doc: PolicyDocument): boolean {
  return doc.rules.some((r) => r.when.keys !== undefined);
}

/** The payload's principal: the calling key, a fact of the decision only when a rule reads keys. */
export function payloadPrincipal(doc: PolicyDocument, keyId: string | null): { key_id: string | null } | undefined {
  return readsKeys(doc) ? { key_id: keyId } : undefined;
}

// Version 1 is referenced by receipts forever: freezing stops any caller from changing
// what its hash stands for.
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

const ALLOWED_CURRENCIES = ["USD", "EUR", "GBP"];

// Deny by default; deny rules for irreversible or dangerous actions come first so that no
// later allow can override them. Order matters: the first matching rule decides.
export const DEFAULT_POLICY: PolicyDocument = deepFreeze<PolicyDocument>({
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    {
      id: "deny_database_drop",
      effect: "deny",
      reason: "destructive_action",
      when: { actions: ["database.drop", "database.truncate"] },
    },
    {
      id: "deny_production_delete",
      effect: "deny",
      reason: "destructive_action_in_production",
      when: {
        actions: ["database.delete", "record.delete", "file.delete", "bucket.delete", "user.delete"],
        resources: ["prod/*"],
      },
    },
    { id: "deny_shell_exec", effect: "deny", reason: "shell_execution_forbidden", when: { actions: ["shell.exec"] } },
    { id: "deny_secret_access", effect: "deny", reason: "secret_access_forbidden", when: { actions: ["secrets.*"] } },
    // Any payment-like action over the limit, whatever its currency.
    {
      id: "deny_payment_over_limit",
      effect: "deny",
      reason: "amount_over_limit",
      when: { actions: ["payment.*"], amount: { gt: 1000 } },
    },
    {
      id: "allow_payment_within_limit",
      effect: "allow",
      reason: "payment_within_limit",
      when: { actions: ["payment.send"], amount: { lte: 1000 }, currency: { in: ALLOWED_CURRENCIES } },
    },
    // Reached only by amounts within the limit, so the currency (missing or foreign) is the reason.
    {
      id: "deny_payment_currency",
      effect: "deny",
      reason: "currency_not_allowed",
      when: { actions: ["payment.send"], amount: { lte: 1000 } },
    },
    { id: "deny_payment_without_amount", effect: "deny", reason: "amount_required", when: { actions: ["payment.send"] } },
    { id: "allow_document_read", effect: "allow", reason: "read_only", when: { actions: ["document.read"] } },
    {
      id: "deny_bulk_email",
      effect: "deny",
      reason: "bulk_email_forbidden",
      when: { actions: ["email.send"], context: { bulk: { eq: true } } },
    },
    { id: "allow_email_send", effect: "allow", reason: "email_allowed", when: { actions: ["email.send"] } },
    {
      id: "allow_deploy_staging",
      effect: "allow",
      reason: "staging_deploy",
      when: { actions: ["deploy"], resources: ["staging/*"] },
    },
    {
      id: "allow_deploy_production_approved",
      effect: "allow",
      reason: "deploy_approved",
      when: { actions: ["deploy"], resources: ["prod/*"], context: { approved: { eq: true } } },
    },
    {
      id: "deny_deploy_production_unapproved",
      effect: "deny",
      reason: "approval_required",
      when: { actions: ["deploy"], resources: ["prod/*"] },
    },
  ],
});

export const DEFAULT_POLICY_REF = Object.freeze({ policy_id: "pol_default", version: 1 });

export async function policyHash(doc: PolicyDocument): Promise<string> {
  return contentHash(doc);
}
