// The stored entities a decision reads: the input's subject and resource, by type and id
// (docs/api.md, "Entities"), cached per tenant.
import { BoundedMap } from "../bounded-map.ts";
import { Coalescer } from "../db/coalescer.ts";
import type { Db } from "../db/index.ts";
import type { AttributeValue, EntityRecord, EntityRef } from "../decide/entities.ts";

export interface EntityRefs {
  subject?: EntityRef;
  resource?: EntityRef;
}

/** Each ref asked for: its entity, or null when the tenant has none by that type and id. */
export interface FoundEntities {
  subject?: EntityRecord | null;
  resource?: EntityRecord | null;
}

/** What one tenant's cache holds: entities (and absences) read at one head version. */
interface Known {
  head: number;
  entities: Map<string, EntityRecord | null>;
}

/** Entries one tenant's cache holds at most before it starts again. */
const PER_TENANT = 10_000;

const keyOf = (ref: EntityRef) => JSON.stringify([ref.type, ref.id]);

export class EntityLookup {
  /**
   * Entities read lately, by tenant. Freshness: every entity write moves its tenant's entity head
   * (entities_upsert(), entity_delete(), sql/schema/15_entities.sql) and announces it on channel
   * entities. Where the database tells this process of every change before the change's own answer
   * (embedded), a changed tenant's entries are dropped when the notice comes; elsewhere they are
   * reused only while the tenant's head version, read after the request arrived, still matches.
   * Either way a write is seen by the next decision, on every instance.
   */
  private readonly known = new BoundedMap<string, Known>(10_000);
  private readonly heads: Coalescer<string, number>;
  /** Set once notices drive freshness; counts them, so a lookup that ran across one is not kept. */
  private notices: number | undefined;

  /** A lookup that listens for changes where the database offers it. */
  static async open(db: Db): Promise<EntityLookup> {
    const lookup = new EntityLookup(db);
    if (db.listen) {
      await db.listen("entities", (tenant) => lookup.changed(tenant));
      lookup.notices = 0;
    }
    return lookup;
  }

  constructor(private readonly db: Db) {
    this.heads = new Coalescer(
      async (tenants) => {
        const rows = await db.query("entities/heads", [tenants]);
        const byTenant = new Map(rows.map((r) => [r.tenant_id, Number(r.version)]));
        return tenants.map((t) => byTenant.get(t) ?? 0);
      },
      { maxBatch: 256, maxInFlight: 2 },
    );
  }

  /** The tenant's entities named by refs (null: none stored), as of a moment after this call began. */
  async find(tenantId: string, refs: EntityRefs): Promise<FoundEntities> {
    const wanted = [refs.subject, refs.resource].filter((r): r is EntityRef => r !== undefined);
    if (wanted.length === 0) return {};
    let known = this.known.get(tenantId);
    // Listening, a kept entry is current: its tenant's writes would have dropped it.
    if (known && this.notices === undefined && (await this.heads.submit(tenantId)) !== known.head) known = undefined;
    const missing = wanted.filter((r) => !known?.entities.has(keyOf(r)));
    if (missing.length > 0) known = await this.read(tenantId, missing, known);
    const pick = (ref: EntityRef | undefined) => (ref === undefined ? undefined : (known!.entities.get(keyOf(ref)) ?? null));
    const found: FoundEntities = {};
    if (refs.subject) found.subject = pick(refs.subject);
    if (refs.resource) found.resource = pick(refs.resource);
    return found;
  }

  /** Reads the refs with the tenant's head in one snapshot; kept when no notice came meanwhile. */
  private async read(tenantId: string, refs: EntityRef[], known: Known | undefined): Promise<Known> {
    const noticesBefore = this.notices;
    const rows = await this.db.query("entities/lookup", [tenantId, refs.map((r) => r.type), refs.map((r) => r.id)]);
    const head = Number(rows[0]!.head);
    // Entries read at another head are dropped: the fresh read decides.
    const next: Known = known && known.head === head && known.entities.size < PER_TENANT ? known : { head, entities: new Map() };
    for (const ref of refs) next.entities.set(keyOf(ref), null);
    for (const row of rows) {
      if (row.type === null || row.id === null) continue;
      next.entities.set(keyOf({ type: row.type, id: row.id }), {
        type: row.type,
        id: row.id,
        // entity_problem() holds stored attributes and parents to these shapes.
        attributes: row.attributes as Record<string, AttributeValue>,
        parents: row.parents as EntityRef[],
        version: Number(row.version),
      });
    }
    if (this.notices === noticesBefore) this.known.set(tenantId, next);
    else this.known.delete(tenantId);
    return next;
  }

  private changed(tenant: string): void {
    this.notices! += 1;
    this.known.delete(tenant);
  }
}
