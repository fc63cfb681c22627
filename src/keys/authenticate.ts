import { BoundedMap } from "../bounded-map.ts";
import { Coalescer, perDb } from "../db/coalescer.ts";
import type { Db } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import type { FeatureVerdict } from "../plans/features.ts";
import type { PolicyRef } from "../simulation/payload.ts";
import { hashSecret, isWellFormedSecret } from "./secret.ts";

export interface KeyPrincipal {
  tenant_id: string;
  key_id: string;
  plan: string;
  /** The tenant's active custom policy version; null: the built-in default. */
  policy: PolicyRef | null;
  /** Verdicts for the features keys call (simulate, protect, execute), read with the key. */
  features: Record<string, FeatureVerdict>;
}

/** What keys/authenticate returns for one key. */
interface Row {
  secret_hash: string;
  key_id: string;
  tenant_id: string;
  status: string;
  plan: string;
  policy_id: string | null;
  policy_version: number | null;
  policy_hash: string | null;
  /** The features keys call, and for each its verdict and required plan, in the same order. */
  features: string[];
  verdicts: FeatureVerdict["verdict"][];
  required_plans: string[];
}

/** A key's row with its verdicts by feature, as requests use them (made once per lookup). */
type Context = Omit<Row, "features" | "verdicts" | "required_plans"> & { features: Record<string, FeatureVerdict> };

function contextOf({ features, verdicts, required_plans, ...row }: Row): Context {
  const byFeature: Record<string, FeatureVerdict> = {};
  for (let i = 0; i < features.length; i++) byFeature[features[i]] = { verdict: verdicts[i], required_plan: required_plans[i] };
  return { ...row, features: byFeature };
}

/**
 * Lookups in flight share one call (src/db/coalescer.ts): under load one query serves dozens of
 * requests, each of which arrived before its query started. null: no such key.
 */
const lookupsFor = perDb(
  (db: Db) =>
    new Coalescer<string, Context | null>(
      async (hashes) => {
        const rows = await db.query<Row>("keys/authenticate", [hashes]);
        const byHash = new Map(rows.map((r) => [r.secret_hash, contextOf(r)]));
        return hashes.map((h) => byHash.get(h) ?? null);
      },
      { maxBatch: 256, maxInFlight: 2 },
    ),
);

/**
 * The embedded database's key cache. There one process owns the data (the lock file keeps every
 * other process out, operator commands included), so an answer read from the database stays true
 * until this process itself changes keys, tenants, plans, policies or features, which moves
 * keyContextGeneration(). An answer is kept under the generation read before its lookup began
 * and used only while the generation is still that one: a change that ran before, during or after
 * the lookup moved it, so a revoke, rotation, new policy version or plan change is seen by the
 * very next request, as without the cache. Entries expire after CACHE_MS so that last_used_at is
 * still touched about once a minute; unknown keys are not kept.
 * On PostgreSQL other instances write too, so every request reads the database.
 */
const CACHE_MS = 30_000;
interface Cached {
  row: Context;
  generation: number;
  at: number;
}
const cachesFor = perDb((_db: Db) => new BoundedMap<string, Cached>(10_000));

async function lookup(db: Db, hash: string): Promise<Context | null> {
  if (db.kind !== "embedded") return lookupsFor(db).submit(hash);
  const cache = cachesFor(db);
  const generation = db.keyContextGeneration();
  const hit = cache.get(hash);
  if (hit && hit.generation === generation && Date.now() - hit.at < CACHE_MS) return hit.row;
  const row = await lookupsFor(db).submit(hash);
  if (row) cache.set(hash, { row, generation, at: Date.now() });
  return row;
}

/**
 * The tenant behind an API key secret, with what its request needs (plan, active policy version,
 * feature verdicts) in the same round trip. Malformed or mistyped secrets are refused by their
 * checksum without a lookup; revoked keys get key_revoked on the very next request: on
 * PostgreSQL the status is read from the database every time, by a query that starts after the
 * request arrived; on the embedded database from the key cache above, which no change outlives.
 */
export async function authenticateKey(db: Db, secret: string): Promise<KeyPrincipal> {
  if (!isWellFormedSecret(secret)) throw new AppError("unauthorized", "Invalid API key.");
  const row = await lookup(db, await hashSecret(secret));
  if (!row) throw new AppError("unauthorized", "Invalid API key.");
  if (row.status !== "active") throw new AppError("key_revoked");
  return {
    tenant_id: row.tenant_id,
    key_id: row.key_id,
    plan: row.plan,
    policy: row.policy_id === null ? null : { policy_id: row.policy_id, version: Number(row.policy_version), hash: row.policy_hash! },
    features: row.features,
  };
}
