// The feature gate (docs/api.md, plans and features), read from the same `features` table as the
// plans catalog. Below every capability that gates a route on the plan, src/plans/ included.
import type { Queryable } from "../db/index.ts";
import { AppError } from "../http/errors.ts";

export type Feature = "simulate" | "protect" | "execute" | "custom_policy" | "receipt_export" | "sso" | "dedicated_region";

/** What feature_access() says for one tenant and feature. */
export interface FeatureVerdict {
  verdict: "allowed" | "plan_required" | "feature_not_granted";
  required_plan: string;
}

/** Throws 403 plan_required (with required_plan) or feature_not_granted unless the verdict allows. */
export function assertVerdict(feature: Feature, verdict: FeatureVerdict | undefined): void {
  if (!verdict) throw new Error(`no verdict for ${feature}`);
  if (verdict.verdict === "plan_required") {
    throw new AppError("plan_required", `This needs the ${verdict.required_plan} plan or higher.`, { fields: { required_plan: verdict.required_plan } });
  }
  if (verdict.verdict === "feature_not_granted") {
    throw new AppError("feature_not_granted", "This feature is available on request; ask us to enable it for your account.", { fields: { feature } });
  }
}

/** Reads the tenant's verdict and throws unless it may use the feature. */
export async function requireFeature(db: Queryable, tenantId: string, feature: Feature): Promise<void> {
  const row = await db.one("plans/feature_access", [tenantId, feature]);
  if (!row) throw new Error(`feature_access found no row for ${feature}`);
  // feature_verdict() answers only these three.
  assertVerdict(feature, row as FeatureVerdict);
}
