// `warden ops receipts check TENANT`: re-walks one tenant's receipt chain (src/receipts/check.ts)
// with reads through the operator target; exit 1 on any break. The work (hashes, signatures) is
// done here, in the CLI's process, never in the running service's.
import type { OpsTarget } from "../ops/client.ts";
import { targetQueryable } from "../ops/client.ts";
import { checkReceiptLog } from "../receipts/check.ts";
import { progress } from "./progress.ts";

export async function runReceiptsCheck(target: OpsTarget, tenantId: string): Promise<number> {
  const shown = progress();
  const result = await checkReceiptLog(targetQueryable(target), tenantId, (checked, total) => shown.update(`receipts checked: ${checked} of ${total}`));
  shown.done();
  if (!result) {
    console.log(JSON.stringify({ ok: false, error: "unknown_tenant", tenant_id: tenantId }, null, 2));
    return 1;
  }
  console.log(JSON.stringify(result, null, 2));
  return result.ok ? 0 : 1;
}
