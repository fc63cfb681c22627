// Where `warden ops ...` does its work: DATABASE_URL; else the running service's channel in
// DATA_DIR (src/ops/channel.ts); else the embedded database in DATA_DIR, opened directly when no
// service holds it. Whichever it is, the schema check comes first: operator commands never migrate.
import { existsSync } from "node:fs";
import type { Config } from "../config.ts";
import { DataDirInUseError, openDb, pgliteDir } from "../db/index.ts";
import { SchemaMismatchError, schemaVersion } from "../db/migrate.ts";
import { opsSocketPath } from "../ops/channel.ts";
import { connectOpsChannel, directTarget, type OpsTarget } from "../ops/client.ts";

/** How long to wait for a service that holds DATA_DIR but does not listen yet (it is starting). */
const STARTING_MS = 30_000;

export async function openOpsTarget(config: Config): Promise<OpsTarget> {
  const target = await reach(config);
  try {
    await target.request({ op: "hello", schema: schemaVersion() });
    return target;
  } catch (err) {
    await target.close();
    throw err;
  }
}

async function reach(config: Config): Promise<OpsTarget> {
  if (config.databaseUrl) return directTarget(await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 }));
  const deadline = Date.now() + STARTING_MS;
  for (;;) {
    const channel = await connectOpsChannel(config.dataDir);
    if (channel) return channel;
    // Opening would make a new, empty database: say so instead.
    if (!existsSync(pgliteDir(config.dataDir))) throw new SchemaMismatchError(`none (there is no embedded database in ${config.dataDir})`, schemaVersion());
    try {
      return directTarget(await openDb({ dataDir: config.dataDir }));
    } catch (err) {
      if (!(err instanceof DataDirInUseError)) throw err;
      if (Date.now() > deadline) {
        throw new Error(`${err.message}. It does not answer on ${opsSocketPath(config.dataDir)}: is it still starting, or a warden without the operator channel?`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Runs fn against the operator target and closes it. */
export async function withOpsTarget<T>(config: Config, fn: (target: OpsTarget) => Promise<T>): Promise<T> {
  const target = await openOpsTarget(config);
  try {
    return await fn(target);
  } finally {
    await target.close();
  }
}
