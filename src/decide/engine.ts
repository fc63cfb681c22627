import { attributeOf, entityRefs, type AttributeValue, type EntityFacts, type EntityRead, type EntityRecord, type EntityRef } from "./entities.ts";
import { resolveTerms, type Condition, type Op, type PolicyDocument, type ProtectInput, type Ref, type ResolvedTerms, type Rule, type UsageOp, type WhereOp } from "./policy.ts";

export type Decision = "ALLOWED" | "DENIED";

/**
 * What decided: the effect, its reason, and the id of the rule (null: the default effect). A
 * require_approval rule decides DENIED, so a client that knows nothing of approvals fails closed,
 * and names the terms under which people may approve the action instead (`approval`).
 */
export type Verdict = { decision: Decision; reasons: string[]; rule: string | null; approval?: ResolvedTerms; usage?: UsageFact[]; entities?: EntityRead[] };

/** A fact a usage condition read: its rule, the window it counted, and the total before this request. */
export type UsageFact = { rule: string; window_start: string; before: number };

/** The usage facts a decision may read, by rule id (a rule without one counts from 0). */
export type UsageFacts = ReadonlyMap<string, { window_start: string; before: number }>;

/** Who asked, as far as a policy may read it: the API key (null when a session asked). */
/**
 * Who asks: the calling key (null: a session) and, for a call through a remote MCP gateway, the
 * person's role in the tenant, the agent (OAuth client id) and the gateway's name (docs/policy.md,
 * "Who asks").
 */
export type Caller = { key_id: string | null; role?: string; client_id?: string; gateway?: string };

type Value = string | number | boolean | undefined;

// Receipts promise that the same input under the same policy gives the same answer, so this
// module reads only its arguments: no clock, no I/O, no randomness, no mutation.
export function decide(input: ProtectInput, policy: PolicyDocument, caller: Caller = { key_id: null }, facts?: UsageFacts, entities?: EntityFacts): Verdict {
  // Each usage condition reached is a fact of the decision: named in the payload, so the decision
  // stays a pure function of it. So is each stored attribute read (the world records them).
  const read: UsageFact[] = [];
  const world = new World(input, caller, entities);
  const rule = policy.rules.find((r) => {
    if (!matches(r.when, input, caller, world)) return false;
    if (!r.when.usage) return true;
    const fact = facts?.get(r.id) ?? { window_start: "", before: 0 };
    read.push({ rule: r.id, window_start: fact.window_start, before: fact.before });
    return usageHolds(r.when.usage, fact.before + usageOf(r.when.usage, input));
  });
  const usage = read.length > 0 ? { usage: read } : {};
  const attributes = world.reads.length > 0 ? { entities: world.reads } : {};
  if (!rule) return { decision: toDecision(policy.default_effect), reasons: [policy.default_reason], rule: null, ...usage, ...attributes };
  if (rule.effect === "require_approval") return { decision: "DENIED", reasons: [rule.reason], rule: rule.id, approval: resolveTerms(rule.approval), ...usage, ...attributes };
  return { decision: toDecision(rule.effect), reasons: [rule.reason], rule: rule.id, ...usage, ...attributes };
}

type WorldValue = AttributeValue | undefined;

/**
 * The values a `where` condition may read (docs/policy.md, "Entities and attributes"): the
 * request's properties, the calling key, the input's subject and resource, and their stored
 * attributes. Each stored attribute read is recorded once, in the order first read.
 */
class World {
  readonly reads: EntityRead[] = [];
  // Found on first use: a decision without a where condition pays nothing for entities.
  private named?: { subject?: EntityRef; resource?: EntityRef };

  constructor(
    private readonly input: ProtectInput,
    private readonly caller: Caller,
    private readonly facts: EntityFacts | undefined,
  ) {}

  private get refs() {
    return (this.named ??= entityRefs(this.input));
  }

  value(path: string): WorldValue {
    const attribute = attributeOf(path);
    if (attribute) return this.attribute(attribute.entity, attribute.attribute);
    const ctx = this.input.context ?? {};
    if (path.startsWith("context.")) {
      const name = path.slice("context.".length);
      return Object.hasOwn(ctx, name) ? ctx[name] : undefined;
    }
    switch (path) {
      case "action":
        return this.input.action;
      case "resource":
        return this.input.resource;
      case "amount":
        return this.input.amount;
      case "currency":
        return this.input.currency;
      case "principal.key_id":
        return this.caller.key_id ?? undefined;
      case "principal.role":
        return this.caller.role;
      case "principal.client_id":
        return this.caller.client_id;
      case "principal.gateway":
        return this.caller.gateway;
      case "subject.id":
        return this.refs.subject?.id;
      case "subject.type":
        return this.refs.subject?.type;
      case "resource.id":
        return this.refs.resource?.id;
      case "resource.type":
        return this.refs.resource?.type;
    }
    return undefined;
  }

  // An input that names no such entity has nothing to read; a named entity the facts do not hold
  // (or hold for another type and id) is not stored: no attributes, and the read says so.
  private attribute(role: "subject" | "resource", name: string): WorldValue {
    const ref = this.refs[role];
    if (ref === undefined) return undefined;
    const given = this.facts?.[role];
    const record: EntityRecord | null = given && given.type === ref.type && given.id === ref.id ? given : null;
    const value = record && Object.hasOwn(record.attributes, name) ? record.attributes[name] : undefined;
    if (!this.reads.some((r) => r.entity === role && r.attribute === name)) {
      this.reads.push({ entity: role, type: ref.type, id: ref.id, attribute: name, value: value === undefined ? null : Array.isArray(value) ? [...value] : value, version: record ? record.version : null });
    }
    return value;
  }
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

/**
 * Whether a rule's conditions hold for this input (its usage left out: see usageNeeds()), for each
 * rule asked: one world of the input for them all, as decide() has, so its entity refs are found once.
 */
export function conditionsOf(input: ProtectInput, caller: Caller, entities?: EntityFacts): (when: Condition) => boolean {
  const world = new World(input, caller, entities);
  return (when) => matches(when, input, caller, world);
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
function matches(when: Condition, input: ProtectInput, caller: Caller, world: World): boolean {
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
  // Last, so a rule whose request conditions fail reads no stored attribute; in the order of their
  // paths (as the stored document, in JCS form, lists them), so the reads' order is the document's.
  if (when.where) {
    for (const path of sortedPaths(when.where)) {
      if (!whereHolds(when.where[path]!, world.value(path), world)) return false;
    }
  }
  return true;
}

/**
 * A where condition's paths in order, by condition, as every decision asks. Freshness: a policy
 * document is never changed once parsed (a version is immutable), so an entry never goes stale.
 */
const pathOrder = new WeakMap<object, readonly string[]>();
function sortedPaths(where: NonNullable<Condition["where"]>): readonly string[] {
  let paths = pathOrder.get(where);
  if (paths === undefined) pathOrder.set(where, (paths = Object.keys(where).sort()));
  return paths;
}

// The order operators are tried in, so the reads their operands make come in a fixed order.
const WHERE_ORDER = ["exists", "eq", "ne", "in", "not_in", "gt", "gte", "lt", "lte", "prefix", "contains", "any", "all"] as const;

/**
 * Every operator of a `where` condition holds for `value`, each operand a literal or the value its
 * `ref` names. Strict as holds(): types must match, and a missing value, or a missing operand,
 * fails everything but `exists: false`.
 */
export function whereHolds(op: WhereOp, value: WorldValue, world: { value(path: string): WorldValue }): boolean {
  for (const name of WHERE_ORDER) {
    const raw = op[name];
    if (raw === undefined) continue;
    if (name === "exists") {
      if (raw !== (value !== undefined)) return false;
      continue;
    }
    if (value === undefined) return false;
    const operand: WorldValue = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? world.value((raw as Ref).ref) : (raw as AttributeValue);
    if (operand === undefined || !operatorHolds(name, value, operand)) return false;
  }
  return true;
}

function operatorHolds(name: Exclude<(typeof WHERE_ORDER)[number], "exists">, value: AttributeValue, operand: AttributeValue): boolean {
  const list = Array.isArray(value) ? value : undefined;
  const operands = Array.isArray(operand) ? operand : undefined;
  switch (name) {
    case "eq":
      return sameValue(value, operand);
    case "ne":
      return !sameValue(value, operand);
    case "in":
      return list === undefined && operands !== undefined && operands.includes(value as string | number | boolean);
    case "not_in":
      return list === undefined && operands !== undefined && !operands.includes(value as string | number | boolean);
    case "gt":
      return typeof value === "number" && typeof operand === "number" && value > operand;
    case "gte":
      return typeof value === "number" && typeof operand === "number" && value >= operand;
    case "lt":
      return typeof value === "number" && typeof operand === "number" && value < operand;
    case "lte":
      return typeof value === "number" && typeof operand === "number" && value <= operand;
    case "prefix":
      return typeof value === "string" && typeof operand === "string" && value.startsWith(operand);
    case "contains":
      return list !== undefined && operands === undefined && list.includes(operand as string | number | boolean);
    case "any":
      return list !== undefined && operands !== undefined && operands.some((v) => list.includes(v));
    case "all":
      return list !== undefined && operands !== undefined && operands.every((v) => list.includes(v));
  }
}

// Scalars by strict equality; lists item by item, in order.
function sameValue(a: AttributeValue, b: AttributeValue): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => v === b[i]);
  return a === b;
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
