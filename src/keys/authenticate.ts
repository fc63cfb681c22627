// Who a bot is: the tenant and key behind an X-API-Key secret, with what its request needs.
import { Coalescer } from "../db/coalescer.ts";
import type { Db, QueryRow } from "../db/index.ts";
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

type Row = QueryRow<"keys/authenticate">;

export class KeyAuthenticator {
  /**
   * Lookups in flight share one query, but each query starts after every request it serves
   * arrived: a key revoked or rotated before a request is refused on that request, on any
   * instance. Nothing is cached.
   */
  private readonly lookups: Coalescer<string, Row | null>;

  constructor(db: Db) {
    this.lookups = new Coalescer(
      async (hashes) => {
        const rows = await db.query("keys/authenticate", [hashes]);
        const byHash = new Map(rows.map((r) => [r.secret_hash, r]));
        return hashes.map((h) => byHash.get(h) ?? null);
      },
      { maxBatch: 256, maxInFlight: 2 },
    );
  }

  /** The principal behind the request's X-API-Key (only the header counts: a query string ends up in logs). */
  require(request: Request): Promise<KeyPrincipal> {
    const secret = request.headers.get("x-api-key");
    if (!secret) throw new AppError("unauthorized", "Send X-API-Key: <key>.");
    return this.authenticate(secret.trim());
  }

  /** Malformed or mistyped secrets are refused by their checksum, without a lookup. */
  async authenticate(secret: string): Promise<KeyPrincipal> {
    if (!isWellFormedSecret(secret)) throw new AppError("unauthorized", "Invalid API key.");
    const row = await this.lookups.submit(await hashSecret(secret));
    if (!row) throw new AppError("unauthorized", "Invalid API key.");
    if (row.status !== "active") throw new AppError("key_revoked");
    return principalOf(row);
  }
}

function principalOf(row: Row): KeyPrincipal {
  const features: Record<string, FeatureVerdict> = {};
  // verdicts holds feature_verdict()'s values, which its CHECK limits to FeatureVerdict's.
  row.features.forEach((feature, i) => (features[feature] = { verdict: row.verdicts[i] as FeatureVerdict["verdict"], required_plan: row.required_plans[i] }));
  return {
    tenant_id: row.tenant_id,
    key_id: row.key_id,
    plan: row.plan,
    policy: row.policy_id === null ? null : { policy_id: row.policy_id, version: Number(row.policy_version), hash: row.policy_hash! },
    features,
  };
}
