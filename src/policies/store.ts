// A tenant's policy versions: version 1 is the built-in default (pol_default, in code); custom
// versions 2, 3, ... live in the `policies` table as immutable JCS text (docs/policy.md).
import { BoundedMap } from "../bounded-map.ts";
import type { Queryable, QueryRow } from "../db/index.ts";
import { canonicalJson } from "../crypto/canonical.ts";
import type { PolicyRef } from "../simulation/payload.ts";
import { DEFAULT_POLICY, DEFAULT_POLICY_REF, policyHash, type PolicyDocument } from "../simulation/policy.ts";
import type { ActivePolicy } from "../simulation/simulate.ts";

type PolicyRow = QueryRow<"policies/version">;

let builtIn: Promise<ActivePolicy> | undefined;

/** The built-in default policy with its (computed once) hash. */
export function defaultPolicy(): Promise<ActivePolicy> {
  builtIn ??= policyHash(DEFAULT_POLICY).then((hash) => ({ ref: { ...DEFAULT_POLICY_REF, hash }, document: DEFAULT_POLICY }));
  return builtIn;
}

function fromRow(row: PolicyRow): ActivePolicy {
  return { ref: { policy_id: row.policy_id, version: row.version, hash: row.hash }, document: JSON.parse(row.document) as PolicyDocument };
}

/** The policy new decisions of this tenant are made under: its latest version. */
export async function activePolicy(db: Queryable, tenantId: string): Promise<ActivePolicy> {
  const row = await db.one("policies/active", [tenantId]);
  return row ? fromRow(row) : defaultPolicy();
}

export class PolicyVersions {
  /** Versions never change (a trigger refuses it), so an entry never goes stale. */
  private readonly versions = new BoundedMap<string, ActivePolicy>(10_000);

  constructor(private readonly db: Queryable) {}

  /** The policy named by a reference read with the request's key (null: the built-in default). */
  async forRef(tenantId: string, ref: PolicyRef | null): Promise<ActivePolicy> {
    if (ref === null) return defaultPolicy();
    const key = `${tenantId}:${ref.version}`;
    const cached = this.versions.get(key);
    if (cached && cached.ref.hash === ref.hash && cached.ref.policy_id === ref.policy_id) return cached;
    const row = await this.db.one("policies/version", [tenantId, ref.version]);
    if (!row || row.hash !== ref.hash) return activePolicy(this.db, tenantId);
    const policy = fromRow(row);
    this.versions.set(key, policy);
    return policy;
  }
}

/**
 * The document a receipt of this tenant names, when the reference matches a version exactly
 * (id, version and hash); undefined otherwise. Another tenant's versions are never found.
 */
export async function policyByRef(db: Queryable, tenantId: string, ref: PolicyRef): Promise<PolicyDocument | undefined> {
  const builtInPolicy = await defaultPolicy();
  if (ref.policy_id === builtInPolicy.ref.policy_id) {
    return ref.version === builtInPolicy.ref.version && ref.hash === builtInPolicy.ref.hash ? builtInPolicy.document : undefined;
  }
  if (!Number.isSafeInteger(ref.version) || ref.version < 2 || ref.version > 2_147_483_647) return undefined;
  const row = await db.one("policies/version", [tenantId, ref.version]);
  return row && row.policy_id === ref.policy_id && row.hash === ref.hash ? fromRow(row).document : undefined;
}

/** Stores the document as the tenant's next version and returns it. */
export async function publishPolicy(db: Queryable, tenantId: string, document: PolicyDocument): Promise<ActivePolicy> {
  const text = canonicalJson(document);
  const row = await db.one("policies/publish", [tenantId, text, await policyHash(document)]);
  return fromRow(row!);
}
