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
  /** Present when the context is a hint, read for an earlier request (see authenticateKey). */
  hint?: KeyHint;
}

/**
 * A principal made from the context read for its key by an earlier request, not for this one: its
 * append carries the tenant's key_context_epoch read with that context, and the transaction that
 * stores the receipt refuses it (WR006) if the epoch has moved since, i.e. if anything the context
 * depends on changed (migration 012). confirmed turns true once the key has been checked for this
 * request, by that transaction or by a lookup; the front door looks the key up before it sends
 * any answer to a request whose hint is still unconfirmed (src/http/app.ts).
 */
export interface KeyHint {
  key_epoch: number | string;
  confirmed: boolean;
}

/** The features whose calls append a receipt, and so can check a hint in the same transaction. */
export type AppendingFeature = "protect" | "execute";

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
  /** The tenant's key_context_epoch (migration 012), read with the context. */
  key_context_epoch: number | string;
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
 * On PostgreSQL other instances write too, so every request reads the database: the key, or the
 * epoch of a context read for it shortly before, or (protect and execute) has its append check
 * the context it was decided under (hintsFor below).
 */
const CACHE_MS = 30_000;
interface Cached {
  row: Context;
  generation: number;
  at: number;
}
const cachesFor = perDb((_db: Db) => new BoundedMap<string, Cached>(10_000));

/**
 * PostgreSQL's hints: the context last read for each key by a request of this process, for
 * HINT_MS. A hint is never trusted on its own. Protect and execute decide under it and their
 * appends check it in the transaction that stores the receipt (see KeyHint); a stale hint costs
 * one WR006 answer and a lookup, never a wrong receipt. Every other request checks it first with
 * its tenant's epoch, read by a query that starts after the request arrived (lookup below). Hints
 * expire so that a busy key is still read, and its last_used_at touched, about once a minute, as
 * on the embedded database.
 */
const HINT_MS = 30_000;
const hintsFor = perDb((_db: Db) => new BoundedMap<string, { row: Context; at: number }>(10_000));

/** The context read for a key in the last HINT_MS, if any. */
function freshHint(db: Db, hash: string): Context | undefined {
  const known = hintsFor(db).get(hash);
  return known && Date.now() - known.at < HINT_MS ? known.row : undefined;
}

/**
 * Tenants' key_context_epochs, the checks in flight sharing one call (each starts after its request
 * arrived, as a lookup does). undefined: no such tenant.
 */
const epochsFor = perDb(
  (db: Db) =>
    new Coalescer<string, string | undefined>(
      async (tenants) => {
        const rows = await db.query<{ tenant_id: string; key_context_epoch: number | string }>("keys/epochs", [tenants]);
        const byTenant = new Map(rows.map((r) => [r.tenant_id, String(r.key_context_epoch)]));
        return tenants.map((t) => byTenant.get(t));
      },
      { maxBatch: 256, maxInFlight: 2 },
    ),
);

async function lookup(db: Db, hash: string): Promise<Context | null> {
  if (db.kind !== "embedded") {
    // A context read in the last HINT_MS whose tenant's epoch has not moved is the context the
    // lookup would read now: the epoch query is far cheaper than the lookup (docs/performance.md
    // section 21).
    const known = freshHint(db, hash);
    if (known && (await epochsFor(db).submit(known.tenant_id)) === String(known.key_context_epoch)) return known;
    const row = await lookupsFor(db).submit(hash);
    if (row) hintsFor(db).set(hash, { row, at: Date.now() });
    else hintsFor(db).delete(hash);
    return row;
  }
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
 * PostgreSQL the key, or its tenant's key_context_epoch, is read from the database every time, by a
 * query that starts after the request arrived (or, for a protect or execute, checked by the
 * append's transaction, which also starts after it); on the embedded database from the key cache
 * above, which no change outlives.
 *
 * hintFor (PostgreSQL only): the request is a protect or execute, whose append can check the
 * context itself. When this process has read an active key that may call that feature, its
 * context is returned as a hint (principal.hint) without a database call, and the request makes
 * one round trip instead of two (docs/performance.md section 20).
 */
export async function authenticateKey(db: Db, secret: string, hintFor?: AppendingFeature): Promise<KeyPrincipal> {
  if (!isWellFormedSecret(secret)) throw new AppError("unauthorized", "Invalid API key.");
  const hash = await hashSecret(secret);
  if (hintFor && db.kind === "postgres") {
    const known = freshHint(db, hash);
    if (known?.status === "active" && known.features[hintFor]?.verdict === "allowed") {
      const principal = principalOf(known);
      principal.hint = { key_epoch: known.key_context_epoch, confirmed: false };
      return principal;
    }
  }
  const row = await lookup(db, hash);
  if (!row) throw new AppError("unauthorized", "Invalid API key.");
  if (row.status !== "active") throw new AppError("key_revoked");
  return principalOf(row);
}

function principalOf(row: Context): KeyPrincipal {
  return {
    tenant_id: row.tenant_id,
    key_id: row.key_id,
    plan: row.plan,
    policy: row.policy_id === null ? null : { policy_id: row.policy_id, version: Number(row.policy_version), hash: row.policy_hash! },
    features: row.features,
  };
}
