import type { Db } from "./index.ts";
import { loadSqlFiles, SQL_DIR } from "./index.ts";

/**
 * Applies the forward-only migrations of sql/migrations/ that are not yet recorded, in file
 * name order, in one transaction under an advisory lock, so two instances starting at once
 * neither race nor apply a file twice. Returns the versions it applied.
 */
export async function migrate(db: Db, sqlDir = SQL_DIR): Promise<string[]> {
  const versions = [...loadSqlFiles(sqlDir).keys()].filter((n) => n.startsWith("migrations/")).sort();
  return db.tx(async (q) => {
    await q.query("migrations/lock");
    await q.query("migrations/bookkeeping_table");
    const applied = new Set((await q.query<{ version: string }>("migrations/applied")).map((r) => r.version));
    const done: string[] = [];
    for (const file of versions) {
      const version = file.slice("migrations/".length);
      if (applied.has(version)) continue;
      await q.exec(file);
      await q.query("migrations/record", [version]);
      done.push(version);
    }
    return done;
  });
}
