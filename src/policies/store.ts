// A tenant's policy versions: version 1 is the built-in default (pol_default, in code); custom
// versions 2, 3, ... live in the `policies` table as immutable JCS text (docs/policy.md).
import type { ByMember } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import { BoundedMap } from "../bounded-map.ts";
import { DbError, type Queryable, type QueryRow } from "../db/index.ts";
import { canonicalJson } from "../crypto/canonical.ts";
import { sha256HexSync } from "../crypto/sync.ts";
import { DEFAULT_POLICY, DEFAULT_POLICY_REF, policyHash, type ActivePolicy, type PolicyDocument, type PolicyRef } from "../decide/policy.ts";
import { AppError } from "../http/errors.ts";
import type { TestCase } from "./model.ts";
import { runCases } from "./testing.ts";

type PolicyRow = QueryRow<"policies/version">;

/** A version as the policy routes show it: who published it (a member; null: the built-in default, or an operator). */
export type PolicyVersion = ActivePolicy & { published_by: string | null };

/** The built-in default policy (version 1 of every tenant) with its hash: a constant, hashed as the module loads. */
const BUILT_IN: ActivePolicy = Object.freeze({
  ref: Object.freeze({ ...DEFAULT_POLICY_REF, hash: sha256HexSync(canonicalJson(DEFAULT_POLICY)) }),
  document: DEFAULT_POLICY,
});

function fromRow(row: PolicyRow): PolicyVersion {
  return {
    ref: { policy_id: row.policy_id, version: row.version, hash: row.hash },
    document: JSON.parse(row.document) as PolicyDocument,
    published_by: row.published_by,
  };
}

/** The policy new decisions of this tenant are made under: its latest version. */
export async function activePolicy(db: Queryable, tenantId: string): Promise<PolicyVersion> {
  const row = await db.one("policies/active", [tenantId]);
  return row ? fromRow(row) : { ...BUILT_IN, published_by: null };
}

export class PolicyVersions {
  /** Versions never change (a trigger refuses it), so an entry never goes stale. */
  private readonly versions = new BoundedMap<string, ActivePolicy>(10_000);

  constructor(private readonly db: Queryable) {}

  /** The policy named by a reference read with the request's key (null: the built-in default). */
  async forRef(tenantId: string, ref: PolicyRef | null): Promise<ActivePolicy> {
    if (ref === null) return BUILT_IN;
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
  if (ref.policy_id === BUILT_IN.ref.policy_id) {
    return ref.version === BUILT_IN.ref.version && ref.hash === BUILT_IN.ref.hash ? BUILT_IN.document : undefined;
  }
  if (!Number.isSafeInteger(ref.version) || ref.version < 2 || ref.version > 2_147_483_647) return undefined;
  const row = await db.one("policies/version", [tenantId, ref.version]);
  return row && row.policy_id === ref.policy_id && row.hash === ref.hash ? fromRow(row).document : undefined;
}

/** One version of the tenant with its date (version 1: the built-in default, dated from signup); undefined: none. */
export async function policyVersion(db: Queryable, tenantId: string, version: number): Promise<(PolicyVersion & { created_at: string }) | undefined> {
  if (version === 1) {
    const row = await db.one("policies/versions", [tenantId, 2, 1]);
    return row && { ...BUILT_IN, published_by: null, created_at: row.created_at };
  }
  if (version > 2_147_483_647) return undefined;
  const row = await db.one("policies/version", [tenantId, version]);
  return row && { ...fromRow(row), created_at: row.created_at };
}

/** A page of the tenant's versions, newest first, below `before` (null: from the newest). */
export async function listVersions(db: Queryable, tenantId: string, before: number | null, count: number) {
  const rows = await db.query("policies/versions", [tenantId, before, count]);
  return rows.map((row) => {
    const document = row.document === null ? BUILT_IN.document : (JSON.parse(row.document) as PolicyDocument);
    return { version: row.version, hash: row.hash ?? BUILT_IN.ref.hash, created_at: row.created_at, rules: document.rules.length, published_by: row.published_by };
  });
}

/** The tenant's stored test suite (empty when none was stored). */
export async function storedTests(db: Queryable, tenantId: string): Promise<TestCase[]> {
  return parseSuite((await db.one("policies/tests_get", [tenantId]))?.cases ?? null);
}

const parseSuite = (text: string | null): TestCase[] => (text === null ? [] : (JSON.parse(text) as TestCase[]));

/** Replaces the stored suite and records policy.tests_changed (how many cases, and the SHA-256 of the stored JSON). */
export async function storeTests(audit: AuditTrail, by: ByMember, cases: TestCase[]): Promise<TestCase[]> {
  const text = JSON.stringify(cases);
  const row = await audit.tx(async (q, record) => {
    const row = (await q.one("policies/tests_put", [by.tenantId, text]))!;
    await record({ ...by, event: "policy.tests_changed", target: { cases: cases.length, hash: sha256HexSync(row.cases) } });
    return row;
  });
  return JSON.parse(row.cases) as TestCase[];
}

/** Runs against a suite replaced meanwhile (WP003) before the publish gives up: 503, retry. */
const PUBLISH_ATTEMPTS = 3;

/**
 * Stores the document as the tenant's next version and returns it, once the stored suite passes
 * under it; a failing case: 422 policy_tests_failed with every result, and nothing is stored.
 * policy_publish() checks that the suite run is still the stored one; when a PUT of the tests
 * replaced it meanwhile, the new suite runs. The version and its audit event (policy.published,
 * or policy.restored naming the version restored) commit together.
 */
export async function publishPolicy(audit: AuditTrail, db: Queryable, by: ByMember, document: PolicyDocument, restoredFrom?: number): Promise<PolicyVersion> {
  const text = canonicalJson(document);
  const hash = await policyHash(document);
  for (let attempt = 1; ; attempt++) {
    const suite = (await db.one("policies/tests_get", [by.tenantId]))?.cases ?? null;
    const run = runCases(document, parseSuite(suite));
    if (run.failed > 0) {
      throw new AppError("policy_tests_failed", `${run.failed} of ${run.results.length} stored policy tests fail under this document; nothing was published.`, {
        fields: { results: run.results },
      });
    }
    try {
      return await audit.tx(async (q, record) => {
        const published = fromRow((await q.one("policies/publish", [by.tenantId, text, hash, suite, by.actor.member_id]))!);
        const target = { ...published.ref, ...(restoredFrom === undefined ? {} : { restored_from: restoredFrom }) };
        await record({ ...by, event: restoredFrom === undefined ? "policy.published" : "policy.restored", target });
        return published;
      });
    } catch (err) {
      if (!(err instanceof DbError && err.sqlstate === "WP003")) throw err;
      if (attempt === PUBLISH_ATTEMPTS) {
        throw new AppError("unavailable", "The stored policy tests kept changing while this publish ran them; retry.", { headers: { "retry-after": "1" }, fields: { retry_after: 1 } });
      }
    }
  }
}
