// `warden migrate`: applies this build's schema (serve does it too, at start). While a service
// holds the embedded database it has already applied its own: the command then only checks that
// it is this build's.
import type { Config } from "../config.ts";
import { openDb } from "../db/index.ts";
import { migrate, schemaVersion } from "../db/migrate.ts";
import { connectOpsChannel } from "../ops/client.ts";

export async function runMigrate(config: Config): Promise<number> {
  const schema = schemaVersion();
  const channel = config.databaseUrl ? undefined : await connectOpsChannel(config.dataDir);
  if (channel) {
    try {
      await channel.request({ op: "hello", schema });
    } finally {
      await channel.close();
    }
    console.log(JSON.stringify({ ok: true, applied: [], schema, note: "the running service applied it at start" }, null, 2));
    return 0;
  }
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    const applied = await migrate(db);
    console.log(JSON.stringify({ ok: true, applied, schema }, null, 2));
    return 0;
  } finally {
    await db.close();
  }
}
