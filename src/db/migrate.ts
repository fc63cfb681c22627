import { createHash } from "node:crypto";
import type { Db, Queryable } from "./index.ts";
import { loadSqlFiles, SQL_DIR } from "./index.ts";

/**
 * The schema is one baseline, sql/schema/NN_capability.sql, edited in place until v1.0.0. Its
 * version is a hash of those files (names and text), not a number: an edit of the baseline is a
 * new version even when no one remembers to bump one, so a database made from an older baseline
 * is refused instead of being used with a schema that differs from what the code expects.
 */
export function schemaVersion(sqlDir = SQL_DIR): string {
  return `baseline-${createHash("sha256").update(JSON.stringify(baselineFiles(sqlDir))).digest("hex").slice(0, 16)}`;
}

function baselineFiles(sqlDir: string): [string, string][] {
  return [...loadSqlFiles(sqlDir)].filter(([name]) => name.startsWith("schema/")).sort(([a], [b]) => (a < b ? -1 : 1));
}

/**
 * Makes the database hold this build's schema. An empty database gets the baseline (every file of
 * sql/schema/ in name order) and its version, in one transaction under an advisory lock, so two
 * instances starting at once neither race nor apply it twice. A database of this version is left
 * alone. Any other (one made by warden 0.1.0, or by another baseline) is refused: there are no
 * upgrades before v1.0.0. Returns the version it applied, or nothing.
 */
export async function migrate(db: Db, sqlDir = SQL_DIR): Promise<string[]> {
  const version = schemaVersion(sqlDir);
  return db.tx(async (q) => {
    await q.query("migrations/lock");
    const found = await readSchemaVersion(q);
    if (found === version) return [];
    if (found !== "none") throw refused(found, version);
    for (const [file] of baselineFiles(sqlDir)) await q.exec(file);
    // On a Citus coordinator the baseline is then laid out over the workers (docs/deployment.md, "On Citus").
    if ((await q.one("migrations/citus"))?.citus) await q.exec("citus/distribute.sql");
    await q.query("migrations/bookkeeping_table");
    await q.query("migrations/record", [version]);
    return [version];
  });
}

function refused(found: string, wanted: string): Error {
  return new Error(
    `this database holds warden schema ${found}; this build needs schema ${wanted}. ` +
      "Databases and data directories of warden 0.1.0 or of another schema cannot be upgraded: " +
      "start with a new DATA_DIR or an empty database.",
  );
}

/** The database holds another schema than this build's: operator commands refuse it (exit 2). */
export class SchemaMismatchError extends Error {
  constructor(readonly found: string, readonly wanted: string) {
    super(
      `this database holds warden schema ${found}; this build of warden needs schema ${wanted}. ` +
        "Operator commands never migrate: run this build's `warden migrate` (or `warden serve`, which migrates at start), or use the warden build that matches the database.",
    );
    this.name = "SchemaMismatchError";
  }
}

/** The schema version the database holds ("none" when warden's schema is not there), without changing anything. */
export async function readSchemaVersion(db: Queryable): Promise<string> {
  const state = await db.one("migrations/state");
  if (state?.version_table) return (await db.one("migrations/version"))?.version ?? "none";
  if (state?.migrations_table) return "0.1.0 (sql/migrations, schema_migrations)";
  return state?.tenants_table ? "unknown (warden tables without a schema version)" : "none";
}

/** Refuses (SchemaMismatchError) a database whose schema is not `wanted`. */
export async function expectSchemaVersion(db: Queryable, wanted = schemaVersion()): Promise<void> {
  const found = await readSchemaVersion(db);
  if (found !== wanted) throw new SchemaMismatchError(found, wanted);
}
