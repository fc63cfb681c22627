// The catalog and the gating read one table, so what the catalog says is what is enforced.
import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/http/errors.ts";
import { requireFeature, type Feature } from "../../src/features/gate.ts";
import { approve, grant } from "../helpers/ops.ts";
import { call, signup, testService } from "../helpers/service.ts";

describe("GET /features/catalog", () => {
  test("lists the plans with the documented limits and every feature, without authentication", async () => {
    const reply = await call("GET", "/features/catalog");
    expect(reply.status).toBe(200);
    expect(reply.body.plans).toEqual([
      { plan: "free", limits: { protect_per_day: 1000, execute_per_day: 100, receipts_stored: 1000, entities: 1000 } },
      { plan: "pro", limits: { protect_per_day: 5000, execute_per_day: 500, receipts_stored: 10000, entities: 10000 } },
      { plan: "enterprise", limits: { protect_per_day: null, execute_per_day: null, receipts_stored: null, entities: 100000 } },
    ]);
    const byName = Object.fromEntries(reply.body.features.map((f: { feature: string }) => [f.feature, f]));
    expect(Object.keys(byName).sort()).toEqual(["custom_policy", "dedicated_region", "execute", "protect", "receipt_export", "simulate", "sso"]);
    expect(byName.simulate).toMatchObject({ required_plan: "free", access_mode: "self_serve" });
    expect(byName.custom_policy).toMatchObject({ required_plan: "pro", access_mode: "self_serve" });
    expect(byName.receipt_export).toMatchObject({ required_plan: "pro", access_mode: "self_serve" });
    expect(byName.sso).toMatchObject({ required_plan: "enterprise", access_mode: "request_only" });
    expect(byName.dedicated_region).toMatchObject({ required_plan: "enterprise", access_mode: "request_only" });
    for (const f of reply.body.features) expect(f.name.length * f.description.length).toBeGreaterThan(0);
  });
});

describe("gating agrees with the catalog for every feature, plan and grant", () => {
  test("each combination", async () => {
    const { db } = await testService();
    const catalog = (await call("GET", "/features/catalog")).body;
    const rank = (plan: string) => catalog.plans.findIndex((p: { plan: string }) => p.plan === plan);

    const tenants: Record<string, { tenantId: string; token: string }> = {};
    for (const plan of ["free", "pro", "enterprise"]) {
      const user = await signup();
      if (plan !== "free") {
        const req = await call("POST", "/customer/upgrades/request", { json: { requested_plan: plan, reason: "gating" }, headers: { authorization: `Bearer ${user.token}` } });
        await approve(req.body.request_id);
      }
      tenants[plan] = user;
    }
    const granted = await signup();
    for (const f of catalog.features) if (f.access_mode === "request_only") await grant(granted.tenantId, f.feature);

    const outcome = async (tenantId: string, feature: Feature) =>
      requireFeature(db, tenantId, feature).then(
        () => ({ allowed: true }),
        (e: unknown) => {
          if (!(e instanceof AppError)) throw e;
          return { allowed: false, error: e.code, status: e.status, required_plan: e.options.fields?.required_plan };
        },
      );

    for (const f of catalog.features) {
      for (const plan of ["free", "pro", "enterprise"]) {
        const got = await outcome(tenants[plan].tenantId, f.feature);
        if (rank(plan) < rank(f.required_plan)) expect(got).toEqual({ allowed: false, error: "plan_required", status: 403, required_plan: f.required_plan });
        else if (f.access_mode === "request_only") expect(got).toMatchObject({ allowed: false, error: "feature_not_granted", status: 403 });
        else expect(got).toEqual({ allowed: true });
      }
      // A grant alone does not lift the plan requirement.
      const onFreeWithGrant = await outcome(granted.tenantId, f.feature);
      if (f.required_plan !== "free") expect(onFreeWithGrant).toMatchObject({ allowed: false, error: "plan_required" });
    }

    // Enterprise plus a grant: request-only features work.
    for (const f of catalog.features.filter((x: { access_mode: string }) => x.access_mode === "request_only")) {
      await grant(tenants.enterprise.tenantId, f.feature);
      expect(await outcome(tenants.enterprise.tenantId, f.feature)).toEqual({ allowed: true });
    }
  });
});
