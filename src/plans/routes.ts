// /features/catalog (public), /customer/upgrades and /customer/dashboard (JWT).
import { Elysia } from "elysia";
import type { Sessions } from "../accounts/sessions.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import { sessionGuard } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { withIdempotency } from "../http/idempotency.ts";
import { byMember } from "../audit/events.ts";
import { couldNameRow, newId } from "../ids.ts";
import { loadCatalog } from "./catalog.ts";
import { loadDashboard } from "./dashboard.ts";
import { Catalog, Dashboard, UpgradeCancelled, UpgradeCreated, UpgradeIdParams, UpgradeItem, UpgradeList, UpgradeRequestBody } from "./model.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface PlansDeps {
  audit: AuditTrail;
  db: Db;
  log: Logger;
  now: () => Date;
  sessions: Sessions;
}

const security = [{ bearer: [] as string[] }];

export function catalogRoutes(deps: PlansDeps) {
  return new Elysia({ name: "catalog" }).get(
    "/features/catalog",
    async ({ set }) => {
      set.headers["cache-control"] = "public, max-age=60";
      return loadCatalog(deps.db);
    },
    {
      response: { 200: Catalog, 503: ErrorResponse },
      detail: { summary: "Plans with their limits, and features with the plan and access mode they need", tags: ["plans"], security: [] },
    },
  );
}

export function plansRoutes(deps: PlansDeps) {
  return (
    new Elysia({ name: "plans", prefix: "/customer" })
      // Before body validation: a stranger learns nothing about the schema.
      .use(sessionGuard(deps.sessions))
      .guard({ session: true })
      .post(
        "/upgrades/request",
        ({ customer, body, request }) =>
          withIdempotency(deps, request, customer.tenant_id, body, async () => {
            const by = byMember(customer, request);
            const row = await deps.audit.tx(async (q, record) => {
              const row = (await q.one("plans/upgrade_create", [newId("upgr_"), customer.tenant_id, body.requested_plan, body.reason, customer.member_id]))!;
              await record({ ...by, event: "upgrade.requested", target: { request_id: row.request_id, plan: row.requested_plan } });
              return row;
            });
            return { status: 201, body: { ok: true as const, ...row, status: "pending" as const } };
          }),
        {
          body: UpgradeRequestBody,
          parse: "json",
          response: { 201: UpgradeCreated, 400: ErrorResponse, 401: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse },
          detail: { summary: "Ask for a higher plan; an operator reviews it, typically within 1 to 2 business days", tags: ["plans"], security },
        },
      )
      .get("/upgrades", async ({ customer }) => ({ ok: true as const, upgrades: (await deps.db.query("plans/upgrade_list", [customer.tenant_id])) as (typeof UpgradeItem.static)[] }), {
        response: { 200: UpgradeList, 401: ErrorResponse },
        detail: { summary: "The tenant's upgrade requests, newest first", tags: ["plans"], security },
      })
      .post(
        "/upgrades/:id/cancel",
        ({ customer, params, request }) =>
          withIdempotency(deps, request, customer.tenant_id, null, async () => {
            // Unknown and another tenant's request look the same: no existence leak.
            const notFound = () => new AppError("not_found", "No such upgrade request.");
            if (!couldNameRow(params.id)) throw notFound();
            const row = await deps.audit.tx(async (q, record) => {
              const row = await q.one("plans/upgrade_cancel", [customer.tenant_id, params.id]);
              if (!row) throw notFound();
              await record({ ...byMember(customer, request), event: "upgrade.cancelled", target: { request_id: row.request_id, plan: row.requested_plan } });
              return row;
            });
            return { status: 200, body: { ok: true as const, request_id: row.request_id, status: "cancelled" as const } };
          }),
        {
          params: UpgradeIdParams,
          response: { 200: UpgradeCancelled, 401: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse },
          detail: { summary: "Withdraw a pending upgrade request", tags: ["plans"], security },
        },
      )
      .get("/dashboard", ({ customer }) => loadDashboard(deps.db, customer.tenant_id, deps.now()), {
        response: { 200: Dashboard, 401: ErrorResponse },
        detail: { summary: "Today's usage against the plan's limits, stored receipts, active keys, pending upgrade, last 14 days", tags: ["plans"], security },
      })
  );
}
