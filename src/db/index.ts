// The one database module: runs named SQL files from sql/ over the embedded (PGlite) or the
// postgres.js driver. No SQL text lives in TypeScript; a query is called by its file name.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Driver, DriverSession, Row } from "./driver.ts";
import type { PgliteAssets } from "./pglite-open.ts";
import type { Queries, QueryName } from "./queries.gen.ts";
import { toDbError } from "./errors.ts";

export type { Row } from "./driver.ts";
export type { Queries, QueryName } from "./queries.gen.ts";
export { DataDirInUseError, DbError, DbUnavailableError } from "./errors.ts";

type OrNull<Tuple> = { readonly [K in keyof Tuple]: Tuple[K] | null };
/** A query's `$n` parameters, in order; any of them may be NULL. */
export type QueryParams<N extends QueryName> = OrNull<Queries[N]["params"]>;
/** One row of a query, as the drivers return it. */
export type QueryRow<N extends QueryName> = Queries[N]["row"];
/** What follows a query's name: its parameters, exactly as many as it has (none: may be left out). */
type ParamsArg<N extends QueryName> = Queries[N]["params"] extends [] ? [params?: readonly []] : [params: QueryParams<N>];

export const SQL_DIR = fileURLToPath(new URL("../../sql", import.meta.url));

/**
 * What the single binary (src/binary.ts) carries inside itself: every file of sql/, and PGlite's
 * WebAssembly and file-system bundle as paths under Bun's embedded /$bunfs/.
 */
export interface EmbeddedFiles {
  sql: Record<string, string>;
  pglite: PgliteAssets;
}

let embedded: EmbeddedFiles | undefined;

/** From now on SQL comes from the bundle, not from disk, and PGlite loads its embedded files. */
export function useEmbeddedFiles(files: EmbeddedFiles): void {
  embedded = files;
}

/**
 * Queries are typed by src/db/queries.gen.ts, generated from the .sql files (npm run sql:types):
 * an unknown name or a wrong parameter count fails the typecheck.
 */
export interface Queryable {
  /** Runs `sql/queries/<name>.sql` with `$n` parameters; jsonb parameters are plain objects. */
  query<N extends QueryName>(name: N, ...params: ParamsArg<N>): Promise<QueryRow<N>[]>;
  /** The first row, or undefined. */
  one<N extends QueryName>(name: N, ...params: ParamsArg<N>): Promise<QueryRow<N> | undefined>;
  /** Runs a whole script, `sql/<file>` (several statements, no parameters). */
  exec(file: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: "embedded" | "postgres";
  /**
   * Runs one statement of an operator script from sql/ops/ (already loaded from its file and
   * translated by src/ops/psql-script.ts); with inTransaction, in a transaction of its own, so on
   * the embedded database nothing else runs between its start and its commit. Not for
   * application queries: those go through query().
   */
  runScriptStatement<T = Row>(file: string, text: string, params: readonly unknown[], inTransaction?: boolean): Promise<T[]>;
  sqlFile(file: string): string;
  /**
   * A consistent copy of the embedded database (a gzipped tar of its data directory) that
   * `warden restore` turns back into one; refused on PostgreSQL, whose tool is pg_dump.
   */
  backup(): Promise<Uint8Array>;
  /** Runs fn in one transaction: committed when fn resolves, rolled back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /**
   * Statements on one database session of their own, run in the order they were sent, each sent
   * without waiting for the answers of those before it, so the server goes from one to the next
   * without a round trip between them. For a caller that keeps several statements in flight whose
   * order matters (receipt batches, src/receipts/append.ts). Each statement is still its own
   * transaction. On the embedded database, the database itself.
   */
  readonly pipeline: Queryable;
  /** The driver's listen(): the embedded database only (src/db/driver.ts). */
  listen?(channel: string, fn: (payload: string) => void): Promise<void>;
  /** The driver's subscribe(): notifications soon after their commit, on both databases. */
  subscribe(channel: string, fn: (payload: string) => void): Promise<void>;
  close(): Promise<void>;
}

/**
 * Reads every `.sql` file below dir once, keyed by its path without the extension. SQL files come
 * from disk in development, from the embedded bundle in the binary.
 */
export function loadSqlFiles(dir: string): Map<string, string> {
  if (embedded && dir === SQL_DIR) return new Map(Object.entries(embedded.sql));
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d).sort()) {
      const full = join(d, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (entry.endsWith(".sql")) files.set(relative(dir, full).split(sep).join("/").slice(0, -4), readFileSync(full, "utf8"));
    }
  };
  walk(dir);
  return files;
}


function queryable(session: DriverSession, queries: Map<string, string>, scripts: Map<string, string>): Queryable {
  const text = (name: string) => {
    const sql = queries.get(name);
    if (sql === undefined) throw new Error(`unknown query: ${name}`);
    return sql;
  };
  const run = async (name: string, params: readonly unknown[] = []): Promise<Row[]> => {
    const sql = text(name);
    try {
      return await session.run(sql, params);
    } catch (err) {
      throw toDbError(err, name);
    }
  };
  // The rows are what the generated types say: they were generated from these same files.
  return {
    query: run as Queryable["query"],
    one: (async (name: string, params?: readonly unknown[]) => (await run(name, params))[0]) as Queryable["one"],
    async exec(file) {
      const sql = scripts.get(file.replace(/\.sql$/, ""));
      if (sql === undefined) throw new Error(`unknown SQL file: ${file}`);
      try {
        await session.script(sql);
      } catch (err) {
        throw toDbError(err, file);
      }
    },
  };
}

export function wrapDriver(driver: Driver, sqlDir = SQL_DIR): Db {
  const scripts = loadSqlFiles(sqlDir);
  const queries = new Map<string, string>();
  for (const [name, sql] of scripts) if (name.startsWith("queries/")) queries.set(name.slice("queries/".length), sql);
  return {
    kind: driver.kind,
    ...queryable(driver, queries, scripts),
    pipeline: queryable(driver.pipeline, queries, scripts),
    async tx(fn) {
      try {
        return await driver.transaction((session) => fn(queryable(session, queries, scripts)));
      } catch (err) {
        throw toDbError(err);
      }
    },
    async runScriptStatement<T>(file: string, text: string, params: readonly unknown[], inTransaction = false) {
      try {
        return (await (inTransaction ? driver.transaction((session) => session.run(text, params)) : driver.run(text, params))) as T[];
      } catch (err) {
        throw toDbError(err, file);
      }
    },
    async backup() {
      if (!driver.dumpDataDir) throw new Error("a PostgreSQL server is backed up with its own tools: pg_dump \"$DATABASE_URL\" (docs/deployment.md)");
      return driver.dumpDataDir(queries.get("system/checkpoint")!);
    },
    /** The text of a file under sql/ (for operator scripts). */
    sqlFile(file: string): string {
      const sql = scripts.get(file.replace(/\.sql$/, ""));
      if (sql === undefined) throw new Error(`unknown SQL file: ${file}`);
      return sql;
    },
    listen: driver.listen?.bind(driver),
    subscribe: (channel, fn) => driver.subscribe(channel, fn),
    close: () => driver.close(),
  };
}

/** The embedded database's own folder inside DATA_DIR, beside the certificate and the mail outbox. */
export function pgliteDir(dataDir: string): string {
  return join(dataDir, "pgdata");
}

/** Makes the embedded database of dataDir from a backup (Db.backup). */
export async function restoreEmbedded(dataDir: string, dump: Uint8Array): Promise<void> {
  const { restorePglite } = await import("./pglite.ts");
  await restorePglite(pgliteDir(dataDir), dump, embedded?.pglite);
}

/** Opens the configured database: postgres.js when a URL is given, else PGlite in dataDir. */
export async function openDb(opts: { databaseUrl?: string; dataDir: string; poolSize?: number }): Promise<Db> {
  if (opts.databaseUrl) {
    const { openPostgres } = await import("./postgres.ts");
    return wrapDriver(await openPostgres(opts.databaseUrl, { max: opts.poolSize }));
  }
  const { openPglite } = await import("./pglite.ts");
  return wrapDriver(await openPglite(opts.dataDir === "memory://" ? opts.dataDir : pgliteDir(opts.dataDir), embedded?.pglite));
}
