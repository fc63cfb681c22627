// The public catalog, read from the same `plans` and `features` tables the gating reads.
import type { Queryable } from "../db/index.ts";
import type { Catalog } from "./model.ts";

export async function loadCatalog(db: Queryable) {
  const [plans, features] = await Promise.all([db.query("plans/catalog_plans"), db.query("plans/catalog_features")]);
  return {
    ok: true as const,
    plans: plans.map(({ plan, ...limits }) => ({ plan, limits })),
    // access_mode: the table's CHECK allows only the model's two.
    features: features as (typeof Catalog.static)["features"],
  };
}
