// The public catalog, read from the same `plans` and `features` tables the gating reads.
import type { Queryable } from "../db/index.ts";

type PlanRow = { plan: string; protect_per_day: number | null; execute_per_day: number | null; receipts_stored: number | null };
type FeatureRow = { feature: string; name: string; description: string; required_plan: string; access_mode: "self_serve" | "request_only" };

export async function loadCatalog(db: Queryable) {
  const [plans, features] = await Promise.all([db.query<PlanRow>("plans/catalog_plans"), db.query<FeatureRow>("plans/catalog_features")]);
  return {
    ok: true as const,
    plans: plans.map(({ plan, ...limits }) => ({ plan, limits })),
    features,
  };
}
