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

/**
 * A value a `where` condition reads (docs/policy.md, "Entities and attributes"): a request
 * property, the calling key, the subject's or resource's type and id as the input names them, or
 * a stored attribute of either.
 */
export const WHERE_PATH =
  "^(action|resource|amount|currency|principal\\.(key_id|role|client_id|gateway)|(subject|resource)\\.(id|type)|context\\.[A-Za-z0-9_.-]{1,64}|(subject|resource)\\.attr\\.[A-Za-z_][A-Za-z0-9_]{0,63})$";
const WherePath = Type.String({ pattern: WHERE_PATH });
/** An operand that is another value of the decision's world instead of a literal. */
export const Ref = Type.Object({ ref: WherePath }, { additionalProperties: false });
export type Ref = Static<typeof Ref>;
const orRef = <T extends TSchema>(literal: T) => Type.Union([literal, Ref]);

/**
 * The operators of a `where` condition: those of an OP, plus list membership (`contains`: the
 * value is a list holding the operand; `any`: a list sharing an item with the operand list; `all`:
 * a list holding every item of it). Every operand may be a literal or `{"ref": PATH}`.
 */
export const WhereOp = Type.Object(
  {
    eq: Type.Optional(orRef(ContextValue)),
    ne: Type.Optional(orRef(ContextValue)),
    in: Type.Optional(orRef(list(ContextValue))),
    not_in: Type.Optional(orRef(list(ContextValue))),
    gt: Type.Optional(orRef(Type.Number())),
    gte: Type.Optional(orRef(Type.Number())),
    lt: Type.Optional(orRef(Type.Number())),
    lte: Type.Optional(orRef(Type.Number())),
    prefix: Type.Optional(orRef(Type.String({ minLength: 1, maxLength: 500 }))),
    contains: Type.Optional(orRef(ContextValue)),
    any: Type.Optional(orRef(list(ContextValue))),
    all: Type.Optional(orRef(list(ContextValue))),
    exists: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type WhereOp = Static<typeof WhereOp>;

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
    where: Type.Optional(
      Type.Record(WherePath, WhereOp, {
        minProperties: 1,
        maxProperties: 32,
        additionalProperties: false,
        description:
          'docs/policy.md, "Entities and attributes": each path (action, resource, amount, currency, context.NAME, principal.key_id, principal.role, principal.client_id, principal.gateway, subject.id|type, resource.id|type, subject.attr.NAME, resource.attr.NAME) with its operators (eq, ne, in, not_in, gt, gte, lt, lte, prefix, exists, contains, any, all), each operand a literal or {"ref": PATH}; every one must hold',
      }),
    ),
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
  for (const [i, r] of doc.rules.entries()) {
    for (const [path, op] of Object.entries(r.when.where ?? {})) {
      const problem = whereProblem(doc.entities, path, op);
      if (problem) return { path: `rules/${i}/when/where/${path}${problem.at}`, message: problem.message };
    }
  }
  return undefined;
}

// What each operator needs of the value it tests ("scalar": one of the three scalar types) and of its operand.
const OPERATOR_NEEDS: Record<Exclude<keyof WhereOp, "exists">, { value: AttributeType | "scalar"; operand: AttributeType | "scalar" }> = {
  eq: { value: "scalar", operand: "scalar" },
  ne: { value: "scalar", operand: "scalar" },
  in: { value: "scalar", operand: "list" },
  not_in: { value: "scalar", operand: "list" },
  gt: { value: "number", operand: "number" },
  gte: { value: "number", operand: "number" },
  lt: { value: "number", operand: "number" },
  lte: { value: "number", operand: "number" },
  prefix: { value: "string", operand: "string" },
  contains: { value: "list", operand: "scalar" },
  any: { value: "list", operand: "list" },
  all: { value: "list", operand: "list" },
};

const ATTRIBUTE_PATH = /^(subject|resource)\.attr\.(.+)$/;

/**
 * A `where` condition against the document's entity schema: every attribute it reads is declared
 * (unknown attributes are refused), a type it compares with is one the schema names, and each
 * operator suits the declared type of what it tests and of its operand (a list is tested with
 * contains, any or all; a bound needs a number). `at`: the rest of the JSON path, from the condition.
 */
function whereProblem(schema: EntitySchema | undefined, path: string, op: WhereOp): { at: string; message: string } | undefined {
  const declared = (p: string): { type?: AttributeType; problem?: string } => {
    const m = ATTRIBUTE_PATH.exec(p);
    if (!m) return {};
    const role = m[1] as "subject" | "resource";
    const decl = schema?.[role]?.attributes[m[2]!];
    if (!decl) return { problem: `${p} is not declared: add "${m[2]}" to the document's entities.${role}.attributes, with its type (and "optional": true if entities may lack it)` };
    return { type: decl.type };
  };
  const left = declared(path);
  if (left.problem) return { at: "", message: left.problem };
  const typeOf = /^(subject|resource)\.type$/.exec(path);
  for (const [name, operand] of Object.entries(op)) {
    if (name === "exists") continue;
    const needs = OPERATOR_NEEDS[name as keyof typeof OPERATOR_NEEDS];
    const isRef = operand !== null && typeof operand === "object" && !Array.isArray(operand);
    // Two lists are equal item by item: eq and ne take a list when the other side is a list attribute too.
    if ((name === "eq" || name === "ne") && isRef && left.type === "list") {
      const right = declared((operand as Ref).ref);
      if (right.problem) return { at: `/${name}/ref`, message: right.problem };
      if (right.type !== "list") return { at: `/${name}/ref`, message: `${path} is declared as list: ${name} compares it with another list attribute only` };
      continue;
    }
    if (left.type !== undefined && !fits(left.type, needs.value)) {
      return { at: `/${name}`, message: `${path} is declared as ${left.type}: ${name} needs ${article(needs.value)}` };
    }
    if (isRef) {
      const right = declared((operand as Ref).ref);
      if (right.problem) return { at: `/${name}/ref`, message: right.problem };
      if (right.type !== undefined && !fits(right.type, needs.operand)) {
        return { at: `/${name}/ref`, message: `${(operand as Ref).ref} is declared as ${right.type}: the operand of ${name} must be ${article(needs.operand)}` };
      }
      continue;
    }
    // A literal of another type than the declared attribute's never matches: refused, as amount: {eq: "5"} is.
    const scalarType = left.type === "list" ? undefined : left.type;
    const items = Array.isArray(operand) ? operand : [operand];
    if (scalarType !== undefined && needs.operand !== "number" && items.some((v) => typeof v !== scalarType)) {
      return { at: `/${name}`, message: `${path} is declared as ${scalarType}: compare it with ${article(scalarType)}` };
    }
    const types = typeOf ? schema?.[typeOf[1] as "subject" | "resource"]?.types : undefined;
    if (types && (name === "eq" || name === "in") && items.some((v) => typeof v !== "string" || !types.includes(v))) {
      return { at: `/${name}`, message: `unknown entity type: the document's entities.${typeOf![1]}.types names ${types.map((t) => JSON.stringify(t)).join(", ")}` };
    }
  }
  return undefined;
}

const fits = (declared: AttributeType, needed: AttributeType | "scalar") => (needed === "scalar" ? declared !== "list" : declared === needed);
const article = (t: AttributeType | "scalar") => (t === "list" ? "a list" : t === "scalar" ? "a string, number or boolean" : `a ${t}`);

/** The type of a declared attribute: a scalar type, or a list of scalars. */
export const AttributeType = Type.Union([Type.Literal("string"), Type.Literal("number"), Type.Literal("boolean"), Type.Literal("list")]);
export type AttributeType = Static<typeof AttributeType>;

/**
 * What a policy expects of the subject's or resource's entity: its types and the attributes the
 * policy reads. `optional`: entities may lack it (the policy reads it as missing), so a store that
 * holds it nowhere does not refuse the policy.
 */
export const RoleSchema = Type.Object(
  {
    types: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 50, uniqueItems: true })),
    attributes: Type.Record(
      Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,63}$" }),
      Type.Object({ type: AttributeType, optional: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      { maxProperties: 64, additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type RoleSchema = Static<typeof RoleSchema>;

/** The entities a policy reads (docs/policy.md, "Entities and attributes"): every attribute a condition names is declared here. */
export const EntitySchema = Type.Object(
  { subject: Type.Optional(RoleSchema), resource: Type.Optional(RoleSchema) },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      "the entity types the subject and resource may have and the attributes the conditions read, each {type: string|number|boolean|list, optional?}; an attribute a condition reads must be declared here",
  },
);
export type EntitySchema = Static<typeof EntitySchema>;

export const PolicyDocument = Type.Object(
  {
    default_effect: Effect,
    default_reason: Reason,
    rules: Type.Array(Rule, { maxItems: 200 }),
    entities: Type.Optional(EntitySchema),
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

/**
 * Answers by document, as every decision asks. Freshness: a document is never changed once parsed
 * (a policy version is immutable), so an entry never goes stale.
 */
const keyReaders = new WeakMap<PolicyDocument, boolean>();

/** Whether decisions under this document read the calling key (then the payload names it): a keys condition, or `principal.key_id` in a where. */
export function readsKeys(doc: PolicyDocument): boolean {
  let reads = keyReaders.get(doc);
  if (reads === undefined) {
    const namesKey = (where: NonNullable<Condition["where"]>) =>
      Object.entries(where).some(([path, op]) => path === "principal.key_id" || Object.values(op).some((v) => v !== null && typeof v === "object" && !Array.isArray(v) && (v as Ref).ref === "principal.key_id"));
    reads = doc.rules.some((r) => r.when.keys !== undefined || (r.when.where !== undefined && namesKey(r.when.where)));
    keyReaders.set(doc, reads);
  }
  return reads;
}

/**
 * Who asked through a remote MCP gateway (docs/mcp.md, "Remote gateways"): the person (account,
 * member and role), the agent (OAuth client) and the gateway. Always in such a payload, so every
 * receipt names them and a policy reads principal.role, principal.client_id and principal.gateway.
 */
export interface GatewayCaller {
  account_id: string;
  member_id: string;
  role: string;
  client_id: string;
  gateway_id: string;
  gateway: string;
}

/** A payload's principal: the calling key, and who asked through a gateway. */
export type PayloadPrincipal = { key_id: string | null } & Partial<GatewayCaller>;

/**
 * The payload's principal: the calling key, a fact of the decision only when a rule reads keys;
 * a call through a gateway always names the key and who asked.
 */
export function payloadPrincipal(doc: PolicyDocument, keyId: string | null, via?: GatewayCaller): PayloadPrincipal | undefined {
  if (via) return { key_id: keyId, ...via };
  return readsKeys(doc) ? { key_id: keyId } : undefined;
}

/** The caller decide() reads back from a payload's principal (as recorded). */
export function callerOf(principal: PayloadPrincipal | undefined): { key_id: string | null; role?: string; client_id?: string; gateway?: string } {
  if (!principal) return { key_id: null };
  const { key_id, role, client_id, gateway } = principal;
  return { key_id: key_id ?? null, ...(role !== undefined && { role }), ...(client_id !== undefined && { client_id }), ...(gateway !== undefined && { gateway }) };
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
