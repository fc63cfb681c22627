// Entities as the decision sees them (docs/policy.md, "Entities and attributes"): which entities an
// input names, the stored attributes a decision read, and the facts rebuilt from those reads. Pure:
// the entity store finds the records; this file only names and reads them.
import { Type, type Static } from "@sinclair/typebox";
import type { PolicyDocument, ProtectInput, WhereOp } from "./policy.ts";

export type Scalar = string | number | boolean;
export type AttributeValue = Scalar | Scalar[];
export type EntityRef = { type: string; id: string };
/** An entity as the decision sees it; version: the store's version of that entity row (0: given inline, not stored). */
export type EntityRecord = { type: string; id: string; attributes: Record<string, AttributeValue>; parents?: EntityRef[]; version: number };
/** What the store found for the input's subject and resource: undefined = the input names none; null = named but not stored. */
export type EntityFacts = { subject?: EntityRecord | null; resource?: EntityRecord | null };
/** Which side of the input an entity stands for. */
export type EntityRole = "subject" | "resource";

/**
 * One stored attribute a decision read: the entity (its role, type and id), the attribute, its
 * value (null: the entity lacks it, or is not stored) and the entity's version (null: not stored).
 */
export type EntityRead = { entity: EntityRole; type: string; id: string; attribute: string; value: AttributeValue | null; version: number | null };

// The limits of a stored entity, shared with inline entities.
const TypeOrId = Type.String({ minLength: 1, maxLength: 128 });
const ScalarValue = Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean()]);
export const AttributeValueSchema = Type.Union([ScalarValue, Type.Array(ScalarValue, { maxItems: 100 })]);
export const EntityRefSchema = Type.Object({ type: TypeOrId, id: TypeOrId }, { additionalProperties: false });

/** An entity given inline (a simulation or a policy test case): no store, so no version. */
export const InlineEntity = Type.Object(
  {
    type: TypeOrId,
    id: TypeOrId,
    attributes: Type.Record(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,63}$" }), AttributeValueSchema, { maxProperties: 64, additionalProperties: false }),
    parents: Type.Optional(Type.Array(EntityRefSchema, { maxItems: 100 })),
  },
  { additionalProperties: false },
);
export type InlineEntity = Static<typeof InlineEntity>;
export const InlineEntities = Type.Array(InlineEntity, { maxItems: 100, description: "entities as a store would hold them (version 0): the input's subject and resource are found among them by type and id; none: not stored" });

/** A read as payloads show it (docs/api.md, the payload's `entities`). */
export const EntityReadSchema = Type.Object({
  entity: Type.Union([Type.Literal("subject"), Type.Literal("resource")]),
  type: Type.String(),
  id: Type.String(),
  attribute: Type.String(),
  value: Type.Union([AttributeValueSchema, Type.Null()], { description: "the stored value; null when the entity lacks the attribute or is not stored" }),
  version: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: "the entity's version in the store (0: given inline); null when it is not stored" }),
});

const refString = (v: unknown): string | undefined => (typeof v === "string" && v.length >= 1 && v.length <= 128 ? v : undefined);

/**
 * Answers by input, as the route, decide() and usageNeeds() each ask of the same request.
 * Freshness: an input is never changed once parsed, so an entry never goes stale; it goes with its input.
 */
const named = new WeakMap<ProtectInput, { subject?: EntityRef; resource?: EntityRef }>();

/**
 * Which entities an input names (pure): the subject from context `subject.type` + `subject.id`
 * (as the AuthZEN mapping puts them), the resource from context `resource.type` + `resource.id`,
 * else `input.resource` split at its first "/" ("todo/42" is type todo, id 42).
 */
export function entityRefs(input: ProtectInput): { subject?: EntityRef; resource?: EntityRef } {
  let out = named.get(input);
  if (out === undefined) named.set(input, (out = Object.freeze(refsOf(input))));
  return out;
}

function refsOf(input: ProtectInput): { subject?: EntityRef; resource?: EntityRef } {
  const ctx = input.context;
  const own = (name: string) => (ctx !== undefined && Object.hasOwn(ctx, name) ? refString(ctx[name]) : undefined);
  const out: { subject?: EntityRef; resource?: EntityRef } = {};
  const st = own("subject.type");
  const si = st === undefined ? undefined : own("subject.id");
  if (st !== undefined && si !== undefined) out.subject = Object.freeze({ type: st, id: si });
  const rt = own("resource.type");
  const ri = rt === undefined ? undefined : own("resource.id");
  if (rt !== undefined && ri !== undefined) out.resource = Object.freeze({ type: rt, id: ri });
  else if (input.resource !== undefined) {
    const at = input.resource.indexOf("/");
    const type = at > 0 ? refString(input.resource.slice(0, at)) : undefined;
    const id = type !== undefined ? refString(input.resource.slice(at + 1)) : undefined;
    if (type !== undefined && id !== undefined) out.resource = Object.freeze({ type, id });
  }
  return out;
}

/** The stored attribute a `where` path names, or undefined for a path about the request. */
export function attributeOf(path: string): { entity: EntityRole; attribute: string } | undefined {
  // Asked for every path of every condition a decision reaches: prefixes, not a pattern.
  if (path.startsWith("subject.attr.") && path.length > 13) return { entity: "subject", attribute: path.slice(13) };
  if (path.startsWith("resource.attr.") && path.length > 14) return { entity: "resource", attribute: path.slice(14) };
  return undefined;
}

/** Every path a `where` condition reads: its own, then those its operands name. */
export function pathsOf(path: string, op: WhereOp): string[] {
  const refs = Object.values(op).filter((v): v is { ref: string } => v !== null && typeof v === "object" && !Array.isArray(v) && "ref" in v);
  return [path, ...refs.map((r) => r.ref)];
}

/**
 * Answers by document, as every protect asks. Freshness: a document is never changed once parsed
 * (a policy version is immutable), so an entry never goes stale.
 */
const readers = new WeakMap<PolicyDocument, boolean>();

/** Whether a policy reads stored attributes at all (protect and simulate skip the lookup when not). */
export function readsEntities(doc: PolicyDocument): boolean {
  let reads = readers.get(doc);
  if (reads === undefined) {
    reads = doc.rules.some((r) => Object.entries(r.when.where ?? {}).some(([path, op]) => pathsOf(path, op).some((p) => attributeOf(p) !== undefined)));
    readers.set(doc, reads);
  }
  return reads;
}

/**
 * The store as a decision asks it: the input's subject and resource of a tenant, as stored (null:
 * not stored). `epoch`: the tenant's key context epoch the request's key check read, when it has one.
 */
export interface EntityFinder {
  find(tenantId: string, refs: { subject?: EntityRef; resource?: EntityRef }, epoch?: number): Promise<EntityFacts>;
}

/** The facts for an input from entities given inline: each found by type and id (version 0), else not stored. */
export function inlineFacts(input: ProtectInput, entities: readonly InlineEntity[]): EntityFacts {
  const refs = entityRefs(input);
  const find = (ref: EntityRef | undefined) => {
    if (ref === undefined) return undefined;
    const e = entities.find((x) => x.type === ref.type && x.id === ref.id);
    return e ? { type: e.type, id: e.id, attributes: e.attributes, ...(e.parents ? { parents: e.parents } : {}), version: 0 } : null;
  };
  return { subject: find(refs.subject), resource: find(refs.resource) };
}

/**
 * The facts a decision read, rebuilt from its payload's reads alone (verify, impact): an entity
 * with just the attributes read. A read that names another entity than the input does is ignored,
 * so deciding again does not reproduce it and the check fails.
 */
export function factsFromReads(input: ProtectInput, reads: readonly EntityRead[]): EntityFacts {
  const refs = entityRefs(input);
  const rebuild = (role: EntityRole): EntityRecord | null | undefined => {
    const ref = refs[role];
    if (ref === undefined) return undefined;
    const mine = reads.filter((r) => r.entity === role && r.type === ref.type && r.id === ref.id);
    if (mine.length === 0) return undefined;
    const version = mine[0]!.version;
    if (version === null || mine.some((r) => r.version !== version)) return null;
    const attributes: Record<string, AttributeValue> = {};
    for (const r of mine) if (r.value !== null) attributes[r.attribute] = r.value;
    return { type: ref.type, id: ref.id, attributes, version };
  };
  return { subject: rebuild("subject"), resource: rebuild("resource") };
}

/** A payload's `entities` as reads, when it has that shape (a tampered one: what can be read of it). */
export function readsOf(value: unknown): EntityRead[] {
  if (!Array.isArray(value)) return [];
  return value.filter((r): r is EntityRead => r !== null && typeof r === "object" && (r.entity === "subject" || r.entity === "resource") && typeof r.type === "string" && typeof r.id === "string" && typeof r.attribute === "string");
}

/** What a tenant's store holds: by entity type, the attribute names some stored entity of it has. */
export type StoreCatalogue = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * The document's entity schema against what the store holds (docs/policy.md, "The entity schema"):
 * a declared type no stored entity has, or a declared attribute that no stored entity of the
 * declared types (any type when none is declared) holds, unless it is optional. The JSON path under
 * the document and a message, or undefined.
 */
export function unknownToStore(doc: PolicyDocument, catalogue: StoreCatalogue): { path: string; message: string } | undefined {
  for (const role of ["subject", "resource"] as const) {
    const schema = doc.entities?.[role];
    if (!schema) continue;
    for (const [i, type] of (schema.types ?? []).entries()) {
      if (!catalogue.has(type)) return { path: `entities/${role}/types/${i}`, message: `no stored entity has type ${JSON.stringify(type)}` };
    }
    const types = schema.types ?? [...catalogue.keys()];
    for (const [name, decl] of Object.entries(schema.attributes)) {
      if (decl.optional === true || types.some((t) => catalogue.get(t)?.has(name))) continue;
      return { path: `entities/${role}/attributes/${name}`, message: `no stored ${role} entity has the attribute ${JSON.stringify(name)}: store it, or declare it "optional": true` };
    }
  }
  return undefined;
}
