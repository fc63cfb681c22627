// SQL that only tests run lives in test/sql/, out of the product's sql/ (the service never loads
// it and the binary never carries it). Each file is one statement with `$n` parameters.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DbError, openDb, type Db, type Queryable, type Row } from "../../src/db/index.ts";
import { openPostgres } from "../../src/db/postgres.ts";
import { newId } from "../../src/ids.ts";
import { hashSecret, newSecret, secretHint } from "../../src/keys/secret.ts";
import { uniqueEmail } from "./service.ts";

const TEST_SQL_DIR = join(import.meta.dir, "..", "sql");
const texts = new Map<string, string>();

/** The text of test/sql/<name>.sql. */
export function testSql(name: string): string {
  let text = texts.get(name);
  if (text === undefined) texts.set(name, (text = readFileSync(join(TEST_SQL_DIR, `${name}.sql`), "utf8")));
  return text;
}

/** Runs test/sql/<name>.sql on the database (its own statement, outside any transaction). */
export function testQuery<T = Row>(db: Pick<Db, "runScriptStatement">, name: string, params: readonly unknown[] = []): Promise<T[]> {
  return db.runScriptStatement<T>(`test/sql/${name}.sql`, testSql(name), params);
}

/** The first row of testQuery, or undefined. */
export async function testOne<T = Row>(db: Pick<Db, "runScriptStatement">, name: string, params: readonly unknown[] = []): Promise<T | undefined> {
  return (await testQuery<T>(db, name, params))[0];
}

/**
 * PostgreSQL only: fn in a transaction on a connection of its own, where test SQL can hold a lock
 * until fn settles (a request kept in flight on purpose). Committed when fn resolves.
 */
export async function testTransaction<T>(databaseUrl: string, fn: (run: <R = Row>(name: string, params?: readonly unknown[]) => Promise<R[]>) => Promise<T>): Promise<T> {
  const driver = await openPostgres(databaseUrl, { max: 1 });
  try {
    return await driver.transaction((session) => fn(async <R>(name: string, params: readonly unknown[] = []) => (await session.run(testSql(name), params)) as R[]));
  } finally {
    await driver.close();
  }
}

/** A well-formed bcrypt hash that no test password matches, for accounts made straight in SQL. */
export const SQL_PASSWORD_HASH = "$2b$04$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234";

/** A tenant with one active API key, made straight by accounts/signup (no HTTP, no bcrypt); `tag` names its email. */
export async function sqlTenant(q: Queryable, tag: string): Promise<{ tenantId: string; keyId: string; secretHash: string }> {
  const secret = newSecret();
  const t = { tenantId: newId("cust_"), keyId: newId("key_"), secretHash: await hashSecret(secret) };
  await q.query("accounts/signup", [t.tenantId, newId("acct_"), newId("mbr_"), uniqueEmail(tag), SQL_PASSWORD_HASH, t.keyId, t.secretHash, secretHint(secret)]);
  return t;
}

/**
 * Moves a tenant up to a plan the way an approved upgrade does: a request approved straight in SQL
 * (no email, no audit event), then the plan changed naming it, as tenants_plan_guard requires.
 * Answers the plan's row (none: no such tenant).
 */
export async function planSetAsApproved(db: Pick<Db, "runScriptStatement">, tenantId: string, plan: string): Promise<Row[]> {
  const requestId = newId("upgr_");
  if ((await testQuery(db, "plan_request_raw", [requestId, tenantId, plan])).length === 0) return [];
  await testQuery(db, "plan_request_approve_raw", [tenantId, requestId]);
  return testQuery(db, "plan_set_as_approved", [tenantId, plan, requestId]);
}

class Rollback extends Error {}

/** Runs `fn` in a transaction of `db` that is rolled back afterwards; `fn`'s own failure is thrown. */
export async function rolledBackIn(db: Pick<Db, "tx">, fn: (q: Queryable) => Promise<void>): Promise<void> {
  const outcome = await db.tx(async (q) => {
    await fn(q);
    throw new Rollback();
  }).catch((err: unknown) => err);
  if (!(outcome instanceof Rollback)) throw outcome;
}

/**
 * The constraint a refusal names, as it holds on one server and on a distributed cluster: there the
 * error comes from a shard, names the shard's copy of an index (key_routes_pkey_102008) and carries
 * no constraint field, so the name is read from the message and the shard's suffix dropped
 * (docs/scaling.md). The service itself tells refusals apart by SQLSTATE alone.
 */
export function refusedConstraint(err: DbError | undefined): string | undefined {
  if (!err) return undefined;
  if (err.constraint) return err.constraint.replace(/_\d+$/, "");
  return /constraint "([^"]+?)(?:_\d+)?"/.exec(err.message)?.[1];
}

/** The SQLSTATE a statement was refused with; anything but a database error fails the test. */
export async function sqlstate(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof DbError)) throw new Error(`expected a database error, got ${String(err)}`);
  return err.sqlstate;
}

/**
 * A new, empty database of its own: on a server (TEST_DATABASE_URL) a scratch database beside the
 * test database, dropped by close(); embedded, a new one in memory. poolSize: its connections.
 */
export async function openScratchDb(opts: { poolSize?: number } = {}): Promise<{ db: Db; close: () => Promise<void> }> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const scratch = await openDb({ dataDir: "memory://" });
    return { db: scratch, close: () => scratch.close() };
  }
  const name = `warden_scratch_${process.pid}_${Date.now()}`;
  const admin = async (text: string) => {
    const a = await openDb({ databaseUrl: url, dataDir: "memory://", poolSize: 1 });
    try {
      await a.runScriptStatement("test/sql/scratch_database", text, []);
    } finally {
      await a.close();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  const scratch = await openDb({ databaseUrl: target.toString(), dataDir: "memory://", poolSize: opts.poolSize ?? 2 });
  return {
    db: scratch,
    close: async () => {
      await scratch.close();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Whether the database is a Citus coordinator's (the suite runs on one in CI too). */
export async function isCitus(db: Pick<Db, "runScriptStatement">): Promise<boolean> {
  return (await testOne<{ citus: boolean }>(db, "citus_installed"))?.citus === true;
}
