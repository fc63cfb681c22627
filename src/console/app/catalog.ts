// The public plan and feature catalog (GET /features/catalog): plan order and what each unlocks.
import { api } from "./api.ts";

type Limit = number | null;
export interface Catalog {
  plans: { plan: string; limits: { protect_per_day: Limit; execute_per_day: Limit; receipts_stored: Limit; entities: number } }[];
  features: { feature: string; name: string; description: string; required_plan: string; access_mode: "self_serve" | "request_only" }[];
}

let cached: Promise<Catalog> | undefined;

export function loadCatalog(): Promise<Catalog> {
  cached ??= api<Catalog>("GET", "/features/catalog", { auth: false }).catch((error) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

/** Plans are listed lowest first; an unknown plan ranks below all. */
export function planRank(catalog: Catalog, plan: string): number {
  return catalog.plans.findIndex((p) => p.plan === plan);
}

/** Whether `plan` is high enough for a self-serve feature. */
export function planAllows(catalog: Catalog, plan: string, feature: string): boolean {
  const f = catalog.features.find((x) => x.feature === feature);
  return !!f && f.access_mode === "self_serve" && planRank(catalog, plan) >= planRank(catalog, f.required_plan);
}
