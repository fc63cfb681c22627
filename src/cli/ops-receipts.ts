// `warden ops receipts check TENANT`: re-walks one tenant's receipt chain (src/receipts/check.ts)
// against DATABASE_URL or the embedded database; exit 1 on any break.
import { loadConfig } from "../config.ts";
import { openDb } from "../db/index.ts";
import { migrate } from "../db/migrate.ts";
import { checkReceiptLog } from "../receipts/check.ts";

export const RECEIPTS_USAGE = `  ops receipts check TENANT               re-walk a tenant's receipt chain; exit 1 on any break`;

export async function runReceiptsCheck(tenantId: string): Promise<number> {
  const config = loadConfig();
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrate(db);
    const result = await checkReceiptLog(db, tenantId);
    if (!result) {
      console.log(JSON.stringify({ ok: false, error: "unknown_tenant", tenant_id: tenantId }, null, 2));
      return 1;
    }
    console.log(JSON.stringify(result, null, 2));
    return result.ok ? 0 : 1;
  } finally {
    await db.close();
  }
}
