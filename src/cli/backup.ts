// `warden ops backup FILE` and `warden restore FILE`: a consistent copy of the embedded database
// (taken by the running service, or from DATA_DIR when none runs) and a new DATA_DIR made from one.
// PostgreSQL has its own tools; with DATABASE_URL both commands point to them.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { Config } from "../config.ts";
import { openDb, restoreEmbedded } from "../db/index.ts";
import { readSchemaVersion } from "../db/migrate.ts";
import type { OpsTarget } from "../ops/client.ts";
import { megabytes, progress } from "./progress.ts";

export class RefusedError extends Error {}

export function refuseOnPostgres(config: Config, what: "backup" | "restore"): void {
  if (!config.databaseUrl) return;
  throw new RefusedError(
    what === "backup"
      ? 'with DATABASE_URL the database is a PostgreSQL server: back it up with its own tools, for example pg_dump --format=custom --file=warden.dump "$DATABASE_URL" (docs/deployment.md)'
      : 'with DATABASE_URL the database is a PostgreSQL server: restore a pg_dump with pg_restore --dbname "$DATABASE_URL" warden.dump (docs/deployment.md)',
  );
}

export async function runBackup(target: OpsTarget, file: string): Promise<number> {
  const shown = progress();
  const dump = (await target.request({ op: "backup" }, (bytes) => shown.update(`backup: ${megabytes(bytes)} received`))) as Uint8Array;
  shown.done();
  // It holds every secret the database does (signing keys, the JWT secret): the owner's alone.
  const partial = `${file}.partial`;
  writeFileSync(partial, dump, { mode: 0o600 });
  chmodSync(partial, 0o600);
  renameSync(partial, file);
  console.log(JSON.stringify({ ok: true, file, bytes: dump.length, taken_by: target.via === "service" ? "the running service" : "this command" }, null, 2));
  return 0;
}

export async function runRestore(config: Config, file: string): Promise<number> {
  if (existsSync(config.dataDir) && readdirSync(config.dataDir).length > 0) {
    throw new RefusedError(`DATA_DIR ${config.dataDir} is not empty: restore makes a new data directory (point DATA_DIR at a new or empty folder)`);
  }
  const shown = progress();
  shown.update(`restore: reading ${file}`);
  const dump = new Uint8Array(readFileSync(file));
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  shown.update(`restore: unpacking ${megabytes(dump.length)} into ${config.dataDir}`);
  await restoreEmbedded(config.dataDir, dump);
  const db = await openDb({ dataDir: config.dataDir });
  let schema: string;
  try {
    schema = await readSchemaVersion(db);
  } finally {
    await db.close();
  }
  shown.done();
  console.log(JSON.stringify({ ok: true, data_dir: config.dataDir, bytes: dump.length, schema }, null, 2));
  return 0;
}
