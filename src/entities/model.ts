// Request and response shapes of /customer/entities (docs/api.md, "Entities"). The database holds
// the same rules (entity_problem(), sql/schema/15_entities.sql) as the backstop; here each refusal
// names its JSON path.
import { t } from "elysia";

const strict = { additionalProperties: false } as const;

/** Most entities one PUT writes; most UTF-8 bytes of one entity's JSON text (entities_per_call_cap(), entity_bytes_cap()). */
export const ENTITIES_PER_CALL = 1000;
export const ENTITY_MAX_BYTES = 16 * 1024;

/** An attribute's name: an identifier, so that a policy can name it (docs/policy.md). */
export const ATTRIBUTE_NAME = "^[A-Za-z_][A-Za-z0-9_]{0,63}$";

const Name = (what: string) => t.String({ minLength: 1, maxLength: 128, description: `the entity's ${what}, 1 to 128 characters` });
const Scalar = t.Union([t.String(), t.Number(), t.Boolean()]);
const AttributeValue = t.Union([Scalar, t.Array(Scalar, { maxItems: 100 })], { description: "a string, number or boolean, or a list of at most 100 of them" });

export const EntityRef = t.Object({ type: Name("type"), id: Name("id") }, strict);
export const Attributes = t.Record(t.String({ pattern: ATTRIBUTE_NAME }), AttributeValue, {
  maxProperties: 64,
  additionalProperties: false,
  description: "at most 64 names (identifiers), each a scalar or a list of at most 100 scalars",
});

export const EntityInput = t.Object(
  {
    type: Name("type"),
    id: Name("id"),
    attributes: Attributes,
    parents: t.Optional(t.Array(EntityRef, { maxItems: 100, description: "entities this one belongs to (at most 100)" })),
  },
  strict,
);

export const PutEntitiesBody = t.Object(
  { entities: t.Array(EntityInput, { maxItems: ENTITIES_PER_CALL, description: "at most 1,000 entities, each at most 16 KiB of JSON; all are written or none" }) },
  strict,
);

export const PutEntitiesResponse = t.Object({
  ok: t.Literal(true),
  upserted: t.Integer({ description: "how many entities the call wrote" }),
  version: t.Integer({ description: "the tenant's entity version after the write; every stored entity carries the version of the write that made it" }),
});

export const Entity = t.Object({
  type: t.String(),
  id: t.String(),
  attributes: t.Record(t.String(), AttributeValue),
  parents: t.Array(EntityRef),
  version: t.Integer(),
  updated_at: t.String(),
  updated_by: t.Union([t.String(), t.Null()], { description: "the member who wrote it (null: an operator)" }),
});

export const EntityResponse = t.Object({ ok: t.Literal(true), entity: Entity });
export const EntityList = t.Object({ ok: t.Literal(true), entities: t.Array(Entity), next_cursor: t.Union([t.String(), t.Null()]) });
export const DeleteEntityResponse = t.Object({ ok: t.Literal(true), version: t.Integer() });

export const EntityParams = t.Object({ type: t.String(), id: t.String() });

export const EntityListQuery = t.Object(
  {
    type: t.Optional(Name("type")),
    limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1, default: 50 })),
    cursor: t.Optional(t.String({ maxLength: 800 })),
  },
  strict,
);

export type EntityInputT = typeof EntityInput.static;
export type EntityT = typeof Entity.static;
