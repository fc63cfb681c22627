// A tenant's entities: written in batches by entities_upsert(), one at a time deleted by
// entity_delete(), each write with its audit event in one transaction (docs/api.md, "Entities").
import type { ByMember } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Queryable, QueryRow } from "../db/index.ts";
import type { AttributeValue, EntityRef, StoreCatalogue } from "../decide/entities.ts";
import { AppError } from "../http/errors.ts";
import { ENTITY_MAX_BYTES, type EntityInputT, type EntityT } from "./model.ts";

type EntityRow = QueryRow<"entities/get">;

export function entityOf(row: EntityRow): EntityT {
  return {
    type: row.type,
    id: row.id,
    // entity_problem() holds stored attributes and parents to these shapes.
    attributes: row.attributes as Record<string, AttributeValue>,
    parents: row.parents as EntityRef[],
    version: Number(row.version),
    updated_at: row.updated_at,
    updated_by: row.updated_by,
  };
}

/**
 * What the schema cannot say of a batch: an entity over 16 KiB of JSON, two naming the same
 * entity. 400 with the JSON path of the first; entities_upsert() refuses the same (WE001).
 */
export function batchProblem(entities: EntityInputT[]): string | undefined {
  const seen = new Map<string, number>();
  for (const [i, e] of entities.entries()) {
    const bytes = Buffer.byteLength(JSON.stringify(e), "utf8");
    if (bytes > ENTITY_MAX_BYTES) return `body/entities/${i}: this entity is ${bytes} bytes of JSON; at most ${ENTITY_MAX_BYTES}.`;
    const key = JSON.stringify([e.type, e.id]);
    const first = seen.get(key);
    if (first !== undefined) return `body/entities/${i}: names the same entity as body/entities/${first}.`;
    seen.set(key, i);
  }
  return undefined;
}

/** Writes the batch, all or none, with its entities.upserted event; answers how many and the tenant's entity version. */
export async function upsertEntities(audit: AuditTrail, by: ByMember, entities: EntityInputT[]): Promise<{ upserted: number; version: number }> {
  // Sent as json (the drivers write JSON.stringify's text): entities_upsert() measures each
  // entity's size on the same text batchProblem() did.
  return audit.tx(async (q, record) => {
    const row = (await q.one("entities/upsert", [by.tenantId, by.actor.member_id, entities]))!;
    const result = { upserted: Number(row.upserted), version: Number(row.version) };
    await record({ ...by, event: "entities.upserted", target: { ...result, stored: Number(row.stored) } });
    return result;
  });
}

/** Deletes one entity with its entities.deleted event; 404 when the tenant has none by that name. */
export async function deleteEntity(audit: AuditTrail, by: ByMember, type: string, id: string): Promise<{ version: number }> {
  return audit.tx(async (q, record) => {
    const row = (await q.one("entities/delete", [by.tenantId, by.actor.member_id, type, id]))!;
    const version = Number(row.version);
    await record({ ...by, event: "entities.deleted", target: { type, id, version, stored: Number(row.stored) } });
    return { version };
  });
}

export async function getEntity(db: Queryable, tenantId: string, type: string, id: string): Promise<EntityT> {
  const row = await db.one("entities/get", [tenantId, type, id]);
  if (!row) throw new AppError("not_found", "No entity of this type and id.");
  return entityOf(row);
}

/** A page in (type, id) order after `after`, of one type when given. */
export async function listEntities(db: Queryable, tenantId: string, type: string | null, after: EntityRef | null, count: number): Promise<EntityT[]> {
  const rows = await db.query("entities/list", [tenantId, type, after?.type ?? null, after?.id ?? null, count]);
  return rows.map(entityOf);
}

/** The tenant's stored entity types, each with the attribute names some entity of it has (for unknownToStore()). */
export async function storeCatalogue(db: Queryable, tenantId: string): Promise<StoreCatalogue> {
  const catalogue = new Map<string, Set<string>>();
  for (const row of await db.query("entities/catalogue", [tenantId])) {
    const names = catalogue.get(row.type) ?? new Set<string>();
    if (row.attribute !== null) names.add(row.attribute);
    catalogue.set(row.type, names);
  }
  return catalogue;
}
