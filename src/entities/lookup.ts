// The stored entities a decision reads: the input's subject and resource, by type and id
// (docs/api.md, "Entities"), cached per tenant.
import { BoundedMap } from "../bounded-map.ts";
import { Coalescer } from "../db/coalescer.ts";
import type { Db } from "../db/index.ts";
import { contextEpochs } from "../keys/authenticate.ts";
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

/** An entity (or its absence) as read, with the tenant's key context epoch read just before it. */
interface Known {
  tenantId: string;
  epoch: number;
  entity: EntityRecord | null;
}

/** The cache's key of a tenant's ref. */
const keyOf = (tenantId: string, ref: EntityRef) => JSON.stringify([tenantId, ref.type, ref.id]);

export class EntityLookup {
  /**
   * Entities (and absences) read lately, by tenant, type and id. Freshness: every entity write
   * moves its tenant's key context epoch (sql/schema/15_entities.sql) and announces it on channel
   * key_context. Where the database tells this process of every change before the change's own
   * answer (embedded), a changed tenant's entries are dropped when the notice comes; elsewhere they
   * are reused only while the tenant's epoch, read after the request arrived, still matches: the
   * one the API key's check read (src/keys/authenticate.ts), or one read here for a session.
   * Either way a write is seen by the next decision, on every instance.
   */
  private readonly known = new BoundedMap<string, Known>(10_000);
  private readonly epochs: Coalescer<string, number | undefined>;
  /** Set once notices drive freshness; counts them, so a lookup that ran across one is not kept. */
  private notices: number | undefined;

  /** A lookup that listens for changes where the database offers it. */
  static async open(db: Db): Promise<EntityLookup> {
    const lookup = new EntityLookup(db);
    if (db.listen) {
      await db.listen("key_context", (tenant) => lookup.changed(tenant));
      lookup.notices = 0;
    }
    return lookup;
  }

  constructor(private readonly db: Db) {
    this.epochs = contextEpochs(db);
  }

  /**
   * The tenant's entities named by refs (null: none stored), as of a moment after the request
   * arrived. `epoch`: the tenant's key context epoch as read after the request arrived (an API
   * key's, KeyPrincipal.context_epoch); without it, one is read here when an entry needs checking.
   */
  async find(tenantId: string, refs: EntityRefs, epoch?: number): Promise<FoundEntities> {
    const subjectKey = refs.subject && keyOf(tenantId, refs.subject);
    const resourceKey = refs.resource && keyOf(tenantId, refs.resource);
    if (subjectKey === undefined && resourceKey === undefined) return {};
    let subject = subjectKey === undefined ? undefined : this.known.get(subjectKey);
    let resource = resourceKey === undefined ? undefined : this.known.get(resourceKey);
    // Listening, a kept entry is current: its tenant's writes would have dropped it. Otherwise
    // entries stand only while the tenant's epoch, read after the request arrived, is the one they were read at.
    if ((subject || resource) && this.notices === undefined) {
      const now = epoch ?? (await this.epochs.submit(tenantId));
      if (subject && subject.epoch !== now) subject = undefined;
      if (resource && resource.epoch !== now) resource = undefined;
    }
    if ((subjectKey !== undefined && !subject) || (resourceKey !== undefined && !resource)) {
      // Both read again, together: a subject and a resource are never of two epochs.
      const wanted = [refs.subject, refs.resource].filter((r): r is EntityRef => r !== undefined);
      const read = await this.read(tenantId, wanted);
      subject = subjectKey === undefined ? undefined : read.get(subjectKey);
      resource = resourceKey === undefined ? undefined : read.get(resourceKey);
    }
    const found: FoundEntities = {};
    if (subjectKey !== undefined) found.subject = subject?.entity ?? null;
    if (resourceKey !== undefined) found.resource = resource?.entity ?? null;
    return found;
  }

  /** Reads the refs after the tenant's epoch; kept when no notice came meanwhile. */
  private async read(tenantId: string, refs: EntityRef[]): Promise<Map<string, Known>> {
    const noticesBefore = this.notices;
    const rows = await this.db.query("entities/lookup", [tenantId, refs.map((r) => r.type), refs.map((r) => r.id)]);
    // entity_lookup()'s first row holds the epoch, and only it.
    const epoch = Number(rows[0]!.epoch);
    const read = new Map<string, Known>(refs.map((ref) => [keyOf(tenantId, ref), { tenantId, epoch, entity: null }]));
    for (const row of rows) {
      if (row.type === null || row.id === null) continue;
      const entity: EntityRecord = {
        type: row.type,
        id: row.id,
        // entity_problem() holds stored attributes and parents to these shapes.
        attributes: row.attributes as Record<string, AttributeValue>,
        parents: row.parents as EntityRef[],
        version: Number(row.version),
      };
      read.set(keyOf(tenantId, entity), { tenantId, epoch, entity });
    }
    const keep = this.notices === noticesBefore;
    for (const [key, known] of read) {
      if (keep) this.known.set(key, known);
      else this.known.delete(key);
    }
    return read;
  }

  private changed(tenant: string): void {
    this.notices! += 1;
    for (const [key, known] of this.known) if (known.tenantId === tenant) this.known.delete(key);
  }
}
