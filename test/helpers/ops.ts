// Operator review from tests: the same sql/ops/ scripts an operator runs with psql.
import { runOpsScript } from "../../src/ops/scripts.ts";
import { testService } from "./service.ts";
import { testOne } from "./sql.ts";

export async function approve(requestId: string, reviewer = "test-operator") {
  const { db } = await testService();
  return runOpsScript<{ request_id: string; status: string; plan: string }>(db, "ops/upgrades_approve", { request_id: requestId, reviewer });
}

export async function reject(requestId: string, note: string, reviewer = "test-operator") {
  const { db } = await testService();
  return runOpsScript<{ request_id: string; status: string; review_note: string }>(db, "ops/upgrades_reject", { request_id: requestId, reviewer, note });
}

export async function grant(tenantId: string, feature: string, reviewer = "test-operator") {
  const { db } = await testService();
  return runOpsScript(db, "ops/features_grant", { tenant_id: tenantId, feature, reviewer });
}

export async function planOf(tenantId: string): Promise<string> {
  const { db } = await testService();
  return (await testOne<{ plan: string }>(db, "tenant_plan", [tenantId]))!.plan;
}
