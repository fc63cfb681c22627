// Feature gating (contract section 5), read from the same `features` table as the catalog.
import type { Queryable } from "../db/index.ts";
import { AppError } from "../http/errors.ts";

export type Feature = "simulate" | "protect" | "execute" | "custom_policy" | "receipt_export" | "sso" | "dedicated_region";

/** Throws 403 plan_required (with required_plan) or feature_not_granted unless the tenant may use it. */
export async function requireFeature(db: Queryable, tenantId: string, feature: Feature): Promise<void> {
  const row = await db.one<{ verdict: string; required_plan: string }>("plans/feature_access", [tenantId, feature]);
  if (!row) throw new Error(`feature_access found no row for ${feature}`);
  if (row.verdict === "plan_required") {
    throw new AppError("plan_required", `This needs the ${row.required_plan} plan or higher.`, { fields: { required_plan: row.required_plan } });
  }
  if (row.verdict === "feature_not_granted") {
    throw new AppError("feature_not_granted", "This feature is available on request; ask us to enable it for your account.", { fields: { feature } });
  }
}
