// Who a bot is: the tenant and key behind an X-API-Key secret, with what its request needs.
import { BoundedMap } from "../bounded-map.ts";
import { Coalescer } from "../db/coalescer.ts";
import type { Db, QueryRow } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { noteCaller, requestState } from "../http/request-state.ts";
import type { FeatureVerdict } from "../features/gate.ts";
import type { PolicyRef } from "../decide/policy.ts";
import { hashSecret, isWellFormedSecret } from "./secret.ts";
import { keyRulesOf, type KeyRules } from "./rules.ts";
import { addressAllowed } from "./cidr.ts";

export interface KeyPrincipal {
  tenant_id: string;
  key_id: string;
  plan: string;
  /** The tenant's active custom policy version; null: the built-in default. */
  policy: PolicyRef | null;
  /** Verdicts for the features keys call (simulate, protect, execute), read with the key. */
  features: Record<string, FeatureVerdict>;
  /** What the key itself may do (src/keys/rules.ts); null: nothing beyond its tenant's plan and policy. */
  rules: KeyRules | null;
  /**
   * The tenant's key context epoch, read after the request arrived where the database does not
   * announce changes (embedded: as of the last announcement). Entity writes move it too, so a
   * decision checks the entities it has kept against it (src/entities/lookup.ts).
   */
  context_epoch: number;
}

/** A key's context as read, with its rules parsed once. */
interface Known {
  row: Row;
  rules: KeyRules | null;
}

type Row = QueryRow<"keys/authenticate">;

// A context read for a key is reused for at most this long, so that a busy key is still read,
// and its last_used_at touched, about once a minute.
const REUSE_MS = 30_000;

export class KeyAuthenticator {
  /**
   * Lookups and epoch checks in flight share one query each, and each query starts after every
   * request it serves arrived.
   */
  private readonly lookups: Coalescer<string, Row | null>;
  private readonly db: Db;
  private readonly epochs: Coalescer<string, number | undefined>;
  /**
   * Contexts read lately, by secret hash. Freshness: triggers move a tenant's key_context_epoch on
   * every change a context depends on (sql/schema/05_keys.sql) and announce it on channel
   * key_context. Where the database can tell this process of every change before the change's own
   * answer (embedded), a changed tenant's contexts are dropped when the notice comes; elsewhere one
   * is reused only while its tenant's epoch, read after the request arrived, still matches. Either
   * way a revoke, rotation, plan, policy or catalog change is seen by the next request.
   */
  private readonly known = new BoundedMap<string, Known & { at: number }>(10_000);
  /** Set once notices drive freshness; counts them, so a lookup that ran across one is not kept. */
  private notices: number | undefined;

  /** An authenticator that listens for changes where the database offers it. */
  static async open(db: Db): Promise<KeyAuthenticator> {
    const keys = new KeyAuthenticator(db);
    if (db.listen) {
      await db.listen("key_context", (tenant) => keys.changed(tenant));
      keys.notices = 0;
    }
    return keys;
  }

  constructor(db: Db) {
    this.db = db;
    this.lookups = new Coalescer(
      async (hashes) => {
        const rows = await db.query("keys/authenticate", [hashes]);
        const byHash = new Map(rows.map((r) => [r.secret_hash, r]));
        return hashes.map((h) => byHash.get(h) ?? null);
      },
      { maxBatch: 256, maxInFlight: 2 },
    );
    this.epochs = contextEpochs(db);
  }

  /**
   * The principal behind the request's X-API-Key (only headers count: a query string ends up in
   * logs); with `bearer`, also `Authorization: Bearer <key>`, where AuthZEN clients send theirs.
   */
  async require(request: Request, opts: { bearer?: boolean } = {}): Promise<KeyPrincipal> {
    const secret = request.headers.get("x-api-key") ?? (opts.bearer ? /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization")?.trim() ?? "")?.[1] : undefined);
    if (!secret) throw new AppError("unauthorized", opts.bearer ? "Send X-API-Key: <key> or Authorization: Bearer <key>." : "Send X-API-Key: <key>.");
    const principal = await this.authenticate(secret.trim(), request);
    noteCaller(request, principal.tenant_id, principal.key_id);
    return principal;
  }

  /**
   * Malformed or mistyped secrets are refused by their checksum, without a lookup. A key with
   * rules of its own is held to them here (expiry, suspension, addresses, rate; its actions and
   * daily limit where the action is known: src/keys/rules.ts); a key without any pays one check.
   */
  async authenticate(secret: string, request?: Request): Promise<KeyPrincipal> {
    if (!isWellFormedSecret(secret)) throw new AppError("unauthorized", "Invalid API key.");
    const known = await this.context(await hashSecret(secret));
    if (!known) throw new AppError("unauthorized", "Invalid API key.");
    const { row, rules } = known;
    if (rules === null) {
      if (row.status !== "active") throw new AppError("key_revoked");
    } else {
      const now = Date.now();
      // A key rotated with an overlap is still accepted until the overlap ends.
      if (row.status !== "active" && !(rules.overlapMs !== null && now < rules.overlapMs)) throw new AppError("key_revoked");
      if (rules.expiresMs !== null && now >= rules.expiresMs) throw new AppError("key_expired", "This API key has expired.");
      if (!rules.enabled) throw new AppError("key_disabled", "This API key is disabled.");
      // The same answer as an unknown key: a caller from elsewhere learns nothing of the key.
      if (rules.allowedIps !== null && !addressAllowed(rules.allowedIps, request === undefined ? undefined : requestState(request).ip)) {
        throw new AppError("unauthorized", "Invalid API key.");
      }
      if (rules.rate !== null) {
        const taken = (await this.db.one("keys/rate_take", [row.tenant_id, row.key_id, rules.rate.perSecond, rules.rate.burst]))!;
        if (!taken.allowed) {
          throw new AppError("rate_limited", "This API key's rate limit (limits.per_second, limits.burst) is used up; wait and retry.", {
            fields: { retry_after: taken.retry_after, limit: "key_per_second" },
            headers: { "retry-after": String(taken.retry_after) },
          });
        }
      }
    }
    return principalOf(row, rules);
  }

  private async context(hash: string): Promise<Known | null> {
    const known = this.known.get(hash);
    if (known && Date.now() - known.at < REUSE_MS) {
      // Listening, a kept context is current: its tenant's changes would have dropped it.
      if (this.notices !== undefined || (await this.epochs.submit(known.row.tenant_id)) === known.row.key_context_epoch) return known;
    }
    const noticesBefore = this.notices;
    const row = await this.lookups.submit(hash);
    if (!row) {
      this.known.delete(hash);
      return null;
    }
    const fresh = { row, rules: keyRulesOf(row), at: Date.now() };
    if (this.notices === noticesBefore) this.known.set(hash, fresh);
    else this.known.delete(hash);
    return fresh;
  }

  private changed(tenant: string): void {
    this.notices! += 1;
    for (const [hash, { row }] of this.known) if (row.tenant_id === tenant) this.known.delete(hash);
  }
}

/**
 * The tenants' key context epochs (tenant_key_context_epochs()), each read by a query started after
 * it was asked for, coalesced; undefined for a tenant that does not exist. Key contexts and the
 * entities a decision kept (src/entities/lookup.ts) are reused while it stands.
 */
export function contextEpochs(db: Db): Coalescer<string, number | undefined> {
  return new Coalescer(
    async (tenants) => {
      const rows = await db.query("keys/epochs", [tenants]);
      const byTenant = new Map(rows.map((r) => [r.tenant_id, r.key_context_epoch]));
      return tenants.map((t) => byTenant.get(t));
    },
    { maxBatch: 256, maxInFlight: 2 },
  );
}

function principalOf(row: Row, rules: KeyRules | null): KeyPrincipal {
  const features: Record<string, FeatureVerdict> = {};
  // verdicts holds feature_verdict()'s values, which its CHECK limits to FeatureVerdict's.
  row.features.forEach((feature, i) => (features[feature] = { verdict: row.verdicts[i] as FeatureVerdict["verdict"], required_plan: row.required_plans[i] }));
  return {
    tenant_id: row.tenant_id,
    key_id: row.key_id,
    plan: row.plan,
    policy: row.policy_id === null ? null : { policy_id: row.policy_id, version: Number(row.policy_version), hash: row.policy_hash! },
    features,
    rules,
    context_epoch: Number(row.key_context_epoch),
  };
}
