// /features/catalog and /customer/upgrades: plans, features and upgrade requests.
import { Elysia } from "elysia";
import { ErrorResponse } from "../accounts/model.ts";
import { requireCustomer } from "../http/auth.ts";
import type { Deps } from "../http/deps.ts";
import { AppError } from "../http/errors.ts";
import { newId } from "../ids.ts";
import { loadCatalog } from "./catalog.ts";
import "./mail.ts"; // registers the review email templates with the mail worker
import { Catalog, UpgradeCancelled, UpgradeCreated, UpgradeIdParams, UpgradeList, UpgradeRequestBody } from "./model.ts";

type UpgradeRow = { request_id: string; status: "pending" | "approved" | "rejected" | "cancelled"; requested_plan: string; reason: string; created_at: string; reviewed_at: string | null; review_note: string | null };

const security = [{ bearer: [] as string[] }];

export function plansRoutes(deps: Deps) {
  return new Elysia({ name: "plans" })
    .get("/features/catalog", async ({ set }) => {
      set.headers["cache-control"] = "public, max-age=60";
      return loadCatalog(deps.db);
    }, {
      response: { 200: Catalog },
      detail: { summary: "Plans with their limits, and features with the plan and access mode they need", tags: ["plans"] },
    })
    .post(
      "/customer/upgrades/request",
      async ({ body, request, set }) => {
        const session = await requireCustomer(deps, request);
        const row = await deps.db.one<Omit<UpgradeRow, "reviewed_at" | "review_note">>("plans/upgrade_create", [newId("upgr_"), session.tenant_id, body.requested_plan, body.reason]);
        set.status = 201;
        return { ok: true as const, ...row!, status: "pending" as const };
      },
      {
        body: UpgradeRequestBody,
        parse: "json",
        response: { 201: UpgradeCreated, 400: ErrorResponse, 401: ErrorResponse, 409: ErrorResponse },
        detail: { summary: "Ask for a higher plan; an operator reviews it, typically within 1 to 2 business days", tags: ["plans"], security },
      },
    )
    .get(
      "/customer/upgrades",
      async ({ request }) => {
        const session = await requireCustomer(deps, request);
        return { ok: true as const, upgrades: await deps.db.query<UpgradeRow>("plans/upgrade_list", [session.tenant_id]) };
      },
      { response: { 200: UpgradeList, 401: ErrorResponse }, detail: { summary: "The tenant's upgrade requests, newest first", tags: ["plans"], security } },
    )
    .post(
      "/customer/upgrades/:id/cancel",
      async ({ params, request }) => {
        const session = await requireCustomer(deps, request);
        const row = await deps.db.one<{ request_id: string }>("plans/upgrade_cancel", [session.tenant_id, params.id]);
        // Unknown and another tenant's request look the same: no existence leak.
        if (!row) throw new AppError("not_found", "No such upgrade request.");
        return { ok: true as const, request_id: row.request_id, status: "cancelled" as const };
      },
      {
        params: UpgradeIdParams,
        response: { 200: UpgradeCancelled, 401: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse },
        detail: { summary: "Withdraw a pending upgrade request", tags: ["plans"], security },
      },
    );
}
