// SQL procedures, triggers and constraints, called through the db module as the app calls them.
// Each test runs inside a transaction that is rolled back (a sentinel error), unless what it
// checks is the behaviour of a statement outside a transaction or reads rows with test SQL
// (test/sql, run outside transactions); those commit fresh unique data.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DbError, type Db, type Queryable, type QueryParams } from "../../src/db/index.ts";
import { migrate, schemaVersion } from "../../src/db/migrate.ts";
import { newId } from "../../src/ids.ts";
import { hashSecret, newSecret, secretHint } from "../../src/keys/secret.ts";
import { sha256HexSync } from "../../src/crypto/sync.ts";
import { verifyCanonical } from "../../src/crypto/signature.ts";
import { ReceiptSigner, signingKeyBox } from "../../src/receipts/signer.ts";
import { serviceSecret } from "../../src/accounts/sessions.ts";
import { createLogger } from "../../src/log.ts";
import { openTestDb, uniqueEmail } from "../helpers/service.ts";
import { openScratchDb, planSetAsApproved, refusedConstraint, testOne, testQuery } from "../helpers/sql.ts";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
// Not a real bcrypt hash; the column only checks the `$2` prefix and nothing here logs in.
const PASSWORD_HASH = "$2b$04$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234";
const VERSION = schemaVersion();

class Rollback extends Error {}
const ROLLBACK = new Rollback("rollback");

// Two handles: on PGlite two separate new databases, on a server two pools on the same one.
// `fresh` has no signing keys on PGlite. Three migration runs race from the start: on a new
// server database all three meet on one schema.
let db: Db;
let fresh: Db;
let raced: string[][];

beforeAll(async () => {
  [db, fresh] = await Promise.all([openTestDb(), openTestDb()]);
  raced = await Promise.all([migrate(fresh), migrate(fresh), migrate(db)]);
});
afterAll(async () => {
  await Promise.all([db?.close(), fresh?.close()]);
});

/** Runs fn in a transaction that is always rolled back; rethrows anything but the sentinel. */
async function rolledBack(fn: (q: Queryable) => Promise<void>): Promise<void> {
  const outcome = await db
    .tx(async (q) => {
      await fn(q);
      throw ROLLBACK;
    })
    .then(
      () => new Error("transaction was not rolled back"),
      (err: unknown) => err,
    );
  if (outcome !== ROLLBACK) throw outcome;
}

/** Runs fn on the database itself, committed: for tests that read rows with test SQL. */
async function committed(fn: (q: Db) => Promise<void>): Promise<void> {
  await fn(db);
}

/** The error a promise rejects with (fails the test when it resolves). */
async function failure(promise: Promise<unknown>): Promise<DbError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (err: unknown) => ({ err }),
  );
  if (!("err" in outcome)) throw new Error(`expected a database error, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.err).toBeInstanceOf(DbError);
  return outcome.err as DbError;
}

interface NewTenant {
  tenantId: string;
  accountId: string;
  memberId: string;
  email: string;
  keyId: string;
  secret: string;
  secretHash: string;
}

async function newTenant(): Promise<NewTenant> {
  const secret = newSecret();
  return { tenantId: newId("cust_"), accountId: newId("acct_"), memberId: newId("mbr_"), email: uniqueEmail("sql"), keyId: newId("key_"), secret, secretHash: await hashSecret(secret) };
}

function signupParams(t: NewTenant): QueryParams<"accounts/signup"> {
  return [t.tenantId, t.accountId, t.memberId, t.email, PASSWORD_HASH, t.keyId, t.secretHash, secretHint(t.secret)];
}

type KeyRow = { key_id: string; tenant_id: string; label: string; secret_hash: string; hint: string; status: string; created_at: string; last_used_at: string | null; revoked_at: string | null };

describe("migrate", () => {
  test("concurrent first runs all succeed and apply the baseline once", async () => {
    const [a, b, other] = raced;
    // On PGlite `fresh` is always new. A server database may have been made by an earlier test
    // file; when it was new, the three runs together applied the baseline exactly once.
    const all = [...a, ...b, ...other];
    expect(all.every((v) => v === VERSION)).toBe(true);
    if (fresh.kind === "embedded") {
      expect([...a, ...b]).toEqual([VERSION]);
      expect(other).toEqual([VERSION]);
    } else {
      expect(all.length).toBeLessThanOrEqual(1);
    }
    for (const handle of [fresh, db]) {
      expect(await handle.query("migrations/version")).toEqual([{ version: VERSION }]);
      expect(await handle.query("system/ping")).toEqual([{ ok: 1 }]);
    }
  });

  test("is idempotent: a further run applies nothing", async () => {
    expect(await migrate(fresh)).toEqual([]);
    expect(await migrate(db)).toEqual([]);
    expect(await fresh.query("migrations/version")).toEqual([{ version: VERSION }]);
  });

  test("refuses a database of warden 0.1.0 or of another baseline, naming both versions", async () => {
    const other = await openScratchDb();
    try {
      await testQuery(other.db, "schema_migrations_0_1_0");
      const old = await migrate(other.db).then(() => undefined, (err: unknown) => err as Error);
      expect(old?.message).toContain("0.1.0");
      expect(old?.message).toContain(VERSION);
      expect(old?.message).toContain("new DATA_DIR");
      expect(await testOne(other.db, "relation_exists", ["tenants"])).toEqual({ relation: null });
    } finally {
      await other.close();
    }
  });
});

describe("rolled-back transactions", () => {
  test("leave nothing behind", async () => {
    const t = await newTenant();
    await rolledBack(async (q) => {
      await q.query("accounts/signup", signupParams(t));
      expect(await q.query("accounts/find_for_login", [t.email])).toHaveLength(1);
    });
    expect(await testQuery(db, "tenant_keys", [t.tenantId])).toEqual([]);
    expect(await db.query("accounts/find_for_login", [t.email])).toEqual([]);
  });
});

describe("accounts/signup (tenant_signup)", () => {
  test("creates the tenant on the free plan and one active key labelled default", async () => {
    const t = await newTenant();
    await committed(async (q) => {
      const rows = await q.query("accounts/signup", signupParams(t));
      expect(rows).toHaveLength(1);
      expect(rows[0].tenant_id).toBe(t.tenantId);
      expect(rows[0].key_id).toBe(t.keyId);
      expect(rows[0].created_at).toMatch(ISO);

      const tenant = await testQuery<{ tenant_id: string; email: string; plan: string; session_epoch: number; created_at: string }>(q, "tenant", [t.tenantId]);
      expect(tenant).toEqual([{ tenant_id: t.tenantId, email: t.email, plan: "free", session_epoch: 0, created_at: rows[0].created_at }]);
      // The person who signed up is the tenant's first member, its owner, and made its first key.
      expect(await q.query("accounts/tenants", [t.accountId])).toEqual([{ tenant_id: t.tenantId, role: "owner", member_id: t.memberId, joined_at: rows[0].created_at, contact_email: t.email }]);

      const keys = await testQuery<KeyRow>(q, "tenant_keys", [t.tenantId]);
      expect(keys).toEqual([
        {
          key_id: t.keyId,
          tenant_id: t.tenantId,
          label: "default",
          secret_hash: t.secretHash,
          hint: t.secret.slice(-4),
          status: "active",
          created_at: rows[0].created_at,
          last_used_at: null,
          revoked_at: null,
        },
      ]);
    });
  });

  test("a second signup with the same email is WA007 (email_taken) and adds nothing", async () => {
    // Outside a transaction on purpose: the statement itself must be all or nothing.
    const first = await newTenant();
    await db.query("accounts/signup", signupParams(first));
    const second = { ...(await newTenant()), email: first.email };
    const err = await failure(db.query("accounts/signup", signupParams(second)));
    expect(err.sqlstate).toBe("WA007");
    expect(await testQuery(db, "tenant", [second.tenantId])).toEqual([]);
    expect(await testQuery(db, "tenant_keys", [second.tenantId])).toEqual([]);
    expect(await testQuery<KeyRow>(db, "tenant_keys", [first.tenantId])).toHaveLength(1);
  });

  test("a key that cannot be stored undoes the tenant too", async () => {
    const t = { ...(await newTenant()), keyId: "key_short" };
    const err = await failure(db.query("accounts/signup", signupParams(t)));
    expect(err.sqlstate).toBe("23514");
    expect(refusedConstraint(err)).toBe("api_keys_key_id_check");
    expect(await testQuery(db, "tenant", [t.tenantId])).toEqual([]);
    expect(await db.query("accounts/find_for_login", [t.email])).toEqual([]);
  });

  test("a reused secret hash is refused (its route, key_routes_pkey) and undoes the tenant", async () => {
    const first = await newTenant();
    await db.query("accounts/signup", signupParams(first));
    const second = { ...(await newTenant()), secret: first.secret, secretHash: first.secretHash };
    const err = await failure(db.query("accounts/signup", signupParams(second)));
    expect(err.sqlstate).toBe("23505");
    expect(refusedConstraint(err)).toBe("key_routes_pkey");
    expect(await testQuery(db, "tenant", [second.tenantId])).toEqual([]);
  });

  test("a tenant id of the wrong shape violates the CHECK", async () => {
    for (const tenantId of ["cust_short", "user_" + newId("cust_").slice(5), newId("cust_") + "x", newId("cust_").replace(/.$/, "-")]) {
      const t = { ...(await newTenant()), tenantId };
      await rolledBack(async (q) => {
        const err = await failure(q.query("accounts/signup", signupParams(t)));
        expect(err.sqlstate).toBe("23514");
        expect(refusedConstraint(err)).toBe("tenants_tenant_id_check");
      });
    }
  });

  test("an email that is not normalised violates the CHECK", async () => {
    const t = await newTenant();
    await rolledBack(async (q) => {
      const err = await failure(q.query("accounts/signup", signupParams({ ...t, email: t.email.toUpperCase() })));
      expect(err.sqlstate).toBe("23514");
      expect(refusedConstraint(err)).toBe("accounts_email_check");
    });
  });
});

describe("keys/revoke and api_keys_guard", () => {
  test("revokes an active key once; a second revoke raises WK001", async () => {
    const t = await newTenant();
    await committed(async (q) => {
      await q.query("accounts/signup", signupParams(t));
      const rows = await q.query("keys/revoke", [t.tenantId, t.keyId, null]);
      expect(rows).toHaveLength(1);
      expect(rows[0].key_id).toBe(t.keyId);
      expect(rows[0].status).toBe("revoked");
      expect(rows[0].revoked_at).toMatch(ISO);
      expect(Math.abs(Date.parse(rows[0].revoked_at) - Date.now())).toBeLessThan(5 * 60_000);

      const [stored] = await testQuery<KeyRow>(q, "tenant_keys", [t.tenantId]);
      expect(stored.status).toBe("revoked");
      expect(stored.revoked_at).toBe(rows[0].revoked_at);

      const err = await failure(q.query("keys/revoke", [t.tenantId, t.keyId, null]));
      expect(err.sqlstate).toBe("WK001");
    });
  });

  test("another tenant's id revokes nothing", async () => {
    const owner = await newTenant();
    const other = await newTenant();
    await committed(async (q) => {
      await q.query("accounts/signup", signupParams(owner));
      await q.query("accounts/signup", signupParams(other));
      expect(await q.query("keys/revoke", [other.tenantId, owner.keyId, null])).toEqual([]);
      expect(await q.query("keys/revoke", [owner.tenantId, newId("key_"), null])).toEqual([]);
      const [stored] = await testQuery<KeyRow>(q, "tenant_keys", [owner.tenantId]);
      expect(stored.status).toBe("active");
      expect(stored.revoked_at).toBeNull();
    });
  });
});

test("the embedded database runs with a 16MB buffer pool (memory, docs/performance.md)", async () => {
  const [row] = await testQuery<{ value: string }>(db, "setting", ["shared_buffers"]);
  if (db.kind === "embedded") expect(row.value).toBe("16MB");
  else expect(row.value).toMatch(/^\d+[kMG]B$/);
});

describe("keys/authenticate", () => {
  test("finds the key and plan by hash, touches last_used_at, and shows revocation", async () => {
    const t = await newTenant();
    await committed(async (q) => {
      await q.query("accounts/signup", signupParams(t));
      expect(await q.query("keys/authenticate", [[t.secretHash]])).toEqual([
        // No custom policy yet (the built-in default), and the verdicts for the features keys call.
        {
          secret_hash: t.secretHash, key_id: t.keyId, tenant_id: t.tenantId, status: "active", plan: "free", policy_id: null, policy_version: null, policy_hash: null,
          features: ["execute", "protect", "simulate"], verdicts: ["allowed", "allowed", "allowed"], required_plans: ["free", "free", "free"],
          expires_ms: null, enabled: true, actions: null, protect_per_day: null, per_second: null, burst: null, allowed_ips: null, overlap_ms: null,
          // The tenant's epoch plus the catalogs' revision (tenant_key_context_epochs()), as keys/epochs reads it.
          key_context_epoch: (await q.query("keys/epochs", [[t.tenantId]]))[0]!.key_context_epoch,
        },
      ]);
      const [touched] = await testQuery<KeyRow>(q, "tenant_keys", [t.tenantId]);
      expect(touched.last_used_at).toMatch(ISO);

      expect(await q.query("keys/authenticate", [[await hashSecret(newSecret())]])).toEqual([]);
      expect(await q.query("keys/authenticate", [[t.secretHash.toUpperCase()]])).toEqual([]);

      await q.query("keys/revoke", [t.tenantId, t.keyId, null]);
      // Must not try to touch the revoked key (the guard would refuse the update).
      expect(await q.query("keys/authenticate", [[t.secretHash]])).toEqual([
        expect.objectContaining({ key_id: t.keyId, tenant_id: t.tenantId, status: "revoked", plan: "free" }),
      ]);
    });
  });
  test("answers a batch: one row per known key, duplicates and unknown hashes collapse", async () => {
    const a = await newTenant();
    const b = await newTenant();
    await rolledBack(async (q) => {
      await q.query("accounts/signup", signupParams(a));
      await q.query("accounts/signup", signupParams(b));
      await q.query("keys/revoke", [b.tenantId, b.keyId, null]);
      const unknown = await hashSecret(newSecret());
      const rows = await q.query("keys/authenticate", [[a.secretHash, unknown, b.secretHash, a.secretHash]]);
      expect(rows.map((r) => [r.secret_hash, r.key_id, r.tenant_id, r.status]).sort()).toEqual(
        [
          [a.secretHash, a.keyId, a.tenantId, "active"],
          [b.secretHash, b.keyId, b.tenantId, "revoked"],
        ].sort(),
      );
      expect(await q.query("keys/authenticate", [[]])).toEqual([]);
    });
  });
  test("gives the verdicts feature_access() gives, whatever the catalog requires and the tenant holds", async () => {
    const t = await newTenant();
    await committed(async (q) => {
      await q.query("accounts/signup", signupParams(t));
      // An operator moves protect up to pro and makes execute request-only on free (put back below).
      await testQuery(q, "feature_set", ["protect", "pro", "self_serve"]);
      await testQuery(q, "feature_set", ["execute", "free", "request_only"]);
      try {
      const both = async () => {
        const [row] = await q.query("keys/authenticate", [[t.secretHash]]);
        const fromLookup = Object.fromEntries(row.features!.map((f, i) => [f, { verdict: row.verdicts![i], required_plan: row.required_plans![i] }]));
        const fromAccess: Record<string, { verdict: string; required_plan: string }> = {};
        for (const f of ["simulate", "protect", "execute"]) {
          const { verdict, required_plan } = (await q.one("plans/feature_access", [t.tenantId, f]))!;
          fromAccess[f] = { verdict, required_plan };
        }
        expect(fromLookup).toEqual(fromAccess);
        return Object.fromEntries(Object.entries(fromLookup).map(([f, v]) => [f, v.verdict]));
      };
      expect(await both()).toEqual({ simulate: "allowed", protect: "plan_required", execute: "feature_not_granted" });
      await testQuery(q, "feature_grant_raw", [t.tenantId, "execute"]);
      expect(await both()).toEqual({ simulate: "allowed", protect: "plan_required", execute: "allowed" });
      await planSetAsApproved(q, t.tenantId, "pro");
      expect(await both()).toEqual({ simulate: "allowed", protect: "allowed", execute: "allowed" });
      // A grant does not lift a plan requirement.
      await testQuery(q, "feature_set", ["execute", "enterprise", "request_only"]);
      expect(await both()).toEqual({ simulate: "allowed", protect: "allowed", execute: "plan_required" });
      } finally {
        await testQuery(q, "feature_set", ["protect", "free", "self_serve"]);
        await testQuery(q, "feature_set", ["execute", "free", "self_serve"]);
      }
    });
  });
  // PGlite runs one statement at a time, so the race exists only on a real server.
  // The request started before the revoke committed, so either answer is linearisable; what must
  // not happen is the touch of last_used_at tripping api_keys_guard (WK001, a 409 to the client).
  test.skipIf(!process.env.TEST_DATABASE_URL)("a key revoked while authentication waits for its row does not trip the guard", async () => {
    const t = await newTenant();
    await db.query("accounts/signup", signupParams(t));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const revoking = db.tx(async (q) => {
      await q.query("keys/revoke", [t.tenantId, t.keyId, null]);
      locked();
      await held; // keep the row locked while authentication queues behind it
    });
    await lockTaken;
    const authenticating = db.query("keys/authenticate", [[t.secretHash]]);
    await Bun.sleep(150);
    release();
    await revoking;
    const rows = await authenticating;
    expect(rows).toHaveLength(1);
    expect(["active", "revoked"]).toContain(rows[0].status);
    // After the revoke committed, the next authentication reads it.
    expect((await db.query("keys/authenticate", [[t.secretHash]]))[0].status).toBe("revoked");
  });
});

describe("accounts/end_sessions", () => {
  test("increments the person's session_epoch each time, for that person only", async () => {
    const t = await newTenant();
    const other = await newTenant();
    await rolledBack(async (q) => {
      await q.query("accounts/signup", signupParams(t));
      await q.query("accounts/signup", signupParams(other));
      const session = (s: NewTenant, epoch: number) => ({
        tenant_id: s.tenantId, plan: "free", member_id: s.memberId, account_id: s.accountId, role: "owner", member_epoch: 0,
        account_epoch: epoch, signed_out: false, mfa_active: false, require_mfa: false,
      });
      expect(await q.query("accounts/session", [t.tenantId, t.memberId, t.accountId, "none"])).toEqual([session(t, 0)]);
      expect(await q.query("accounts/end_sessions", [t.accountId])).toEqual([{ session_epoch: 1 }]);
      expect(await q.query("accounts/end_sessions", [t.accountId])).toEqual([{ session_epoch: 2 }]);
      expect(await q.query("accounts/session", [t.tenantId, t.memberId, t.accountId, "none"])).toEqual([session(t, 2)]);
      expect(await q.query("accounts/session", [other.tenantId, other.memberId, other.accountId, "none"])).toEqual([session(other, 0)]);
      // A member id with another person's account, or of another tenant, names no session.
      expect(await q.query("accounts/session", [other.tenantId, other.memberId, t.accountId, "none"])).toEqual([]);
      expect(await q.query("accounts/session", [t.tenantId, other.memberId, other.accountId, "none"])).toEqual([]);
      expect(await q.query("accounts/end_sessions", [newId("acct_")])).toEqual([]);
    });
  });
});

describe("iso_time", () => {
  test("renders ISO 8601 UTC with milliseconds and Z", async () => {
    const cases: [string, string][] = [
      ["2024-02-29 23:59:59.5+05:30", "2024-02-29T18:29:59.500Z"],
      ["2025-01-01 00:00:00+00", "2025-01-01T00:00:00.000Z"],
      ["1999-12-31 19:00:00.007-05", "2000-01-01T00:00:00.007Z"],
      ["2025-06-30 12:34:56.123456+00", "2025-06-30T12:34:56.123Z"],
    ];
    for (const [input, expected] of cases) {
      expect(await testQuery(db, "iso_time", [input])).toEqual([{ iso: expected }]);
      // The same instant as JavaScript prints it.
      expect(new Date(expected).toISOString()).toBe(expected);
    }
  });

  test("never prints a 1000th millisecond", async () => {
    const [{ iso }] = await testQuery<{ iso: string }>(db, "iso_time", ["2025-06-30 12:34:56.999999+00"]);
    expect(iso).toMatch(ISO);
    expect(Number.isNaN(Date.parse(iso))).toBe(false);
  });
});

describe("signing keys", () => {
  // The service secret the test service runs under (JWT_SECRET unset: the one stored in the database).
  const serviceBox = async (handle: Db) => signingKeyBox(await serviceSecret(handle));
  const log = createLogger("error", () => {});

  test("two signers opening at once on a new database share one active key", async () => {
    const box = await serviceBox(fresh);
    const [a, b] = await Promise.all([ReceiptSigner.open(fresh, box, log), ReceiptSigner.open(fresh, box, log)]);
    expect(a.kid).toBe(b.kid);
    const rows = await fresh.query("receipts/signing_keys");
    const active = rows.filter((r) => r.status === "active");
    expect(active.map((r) => r.kid)).toEqual([a.kid]);
    if (fresh.kind === "embedded") expect(rows).toHaveLength(1);
  });

  test("rotation makes a new active key; old signatures verify against the new JWKS", async () => {
    const box = await serviceBox(db);
    const signer = await ReceiptSigner.open(db, box, log);
    const oldKid = signer.kid;
    const claims = { content_hash: "0x" + "ab".repeat(32), request_id: "req_sql_test", tenant_id: newId("cust_"), timestamp: new Date().toISOString(), kind: "simulation" };
    const before = await signer.sign(claims);

    const newKid = await ReceiptSigner.rotate(db, box);
    expect(newKid).not.toBe(oldKid);

    const rows = await db.query("receipts/signing_keys");
    expect(rows.filter((r) => r.status === "active").map((r) => r.kid)).toEqual([newKid]);
    expect(rows.find((r) => r.kid === oldKid)?.status).toBe("retired");

    const jwks = await signer.jwks();
    const kids = jwks.keys.map((k) => (k as { kid?: string }).kid);
    expect(kids).toContain(oldKid);
    expect(kids).toContain(newKid);
    // Public halves only.
    for (const key of jwks.keys) expect("d" in key).toBe(false);

    const verified = await verifyCanonical(before, jwks);
    expect(verified).toEqual({ valid: true, payload: claims, kid: oldKid });

    // A signer opened after the rotation signs with the new key, also verifiable.
    const next = await ReceiptSigner.open(db, box, log);
    expect(next.kid).toBe(newKid);
    const after = await next.sign(claims);
    expect(await verifyCanonical(after, await next.jwks())).toEqual({ valid: true, payload: claims, kid: newKid });
    // Without the new key published, the new signature does not verify.
    expect((await verifyCanonical(after, { keys: jwks.keys.filter((k) => (k as { kid?: string }).kid !== newKid) })).valid).toBe(false);
  });

  test("the private half is stored sealed under the service secret; the database refuses it in the clear", async () => {
    const box = await serviceBox(db);
    const kid = await ReceiptSigner.rotate(db, box);
    const row = (await db.query("receipts/signing_keys")).find((r) => r.kid === kid)!;
    const opened = JSON.parse(await box.open(row.private_sealed, kid)) as JsonWebKey;
    expect(opened).toMatchObject({ kty: "OKP", crv: "Ed25519", kid, x: (row.public_jwk as JsonWebKey).x });
    // Nothing of the private key in any column of the row.
    expect(JSON.stringify(row)).not.toContain(opened.d!);
    // Sealed for this kid: it does not open as another key's, nor under another secret.
    expect(await box.open(row.private_sealed, "another-kid").then(() => "opened", () => "refused")).toBe("refused");
    expect(await (await signingKeyBox("x".repeat(64))).open(row.private_sealed, kid).then(() => "opened", () => "refused")).toBe("refused");
    // A writer that skips the service and stores the JWK itself is refused.
    const clear = await db.query("receipts/signing_key_rotate", ["kid-in-the-clear", row.public_jwk, JSON.stringify(opened)]).then(() => undefined, (e: DbError) => e);
    expect([clear?.sqlstate, refusedConstraint(clear)]).toEqual(["23514", "signing_keys_private_sealed"]);
    expect((await db.query("receipts/signing_keys")).find((r) => r.status === "active")?.kid).toBe(kid);
  });

  test("under another service secret (JWT_SECRET changed) a signer retires the key it cannot open and makes its own", async () => {
    const box = await serviceBox(db);
    const before = await ReceiptSigner.open(db, box, log);
    const claims = { content_hash: "0x" + "cd".repeat(32), request_id: "req_sql_test", tenant_id: newId("cust_"), timestamp: new Date().toISOString(), kind: "simulation" };
    const signedBefore = await before.sign(claims);
    const lines: string[] = [];
    const other = await ReceiptSigner.open(db, await signingKeyBox("another service secret ".repeat(3)), createLogger("info", (line) => lines.push(line)));
    try {
      expect(other.kid).not.toBe(before.kid);
      const rows = await db.query("receipts/signing_keys");
      expect(rows.find((r) => r.kid === before.kid)?.status).toBe("retired");
      expect(rows.find((r) => r.status === "active")?.kid).toBe(other.kid);
      expect(lines.map((line) => JSON.parse(line))).toContainEqual(expect.objectContaining({ event: "signing_key_replaced", retired_kid: before.kid, kid: other.kid }));
      // What the retired key signed still verifies; the new key signs.
      expect((await verifyCanonical(signedBefore, await other.jwks())).valid).toBe(true);
      expect((await verifyCanonical(await other.sign(claims), await other.jwks())).kid).toBe(other.kid);
      // A signer that already holds a key keeps it when the new one does not open for it.
      await before.reload();
      expect(before.kid).toBe((await verifyCanonical(await before.sign(claims), await before.jwks())).kid!);
      expect(before.kid).not.toBe(other.kid);
    } finally {
      // The shared database's key opens under the test service's secret again.
      await ReceiptSigner.rotate(db, box);
    }
  });
});
