// /customer/entities: the tenant's entities, which policies read (docs/api.md, "Entities"). Reads
// for every member; writes for admins and owners (as what goes live in a policy) and need feature
// custom_policy. Sessions only, as every /customer route.
import { Elysia } from "elysia";
import type { Sessions } from "../accounts/sessions.ts";
import { byMember } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Db } from "../db/index.ts";
import { requireFeature } from "../features/gate.ts";
import { sessionGuard } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { decodeEntityCursor, encodeEntityCursor } from "./cursor.ts";
import { DeleteEntityResponse, EntityList, EntityListQuery, EntityParams, EntityResponse, PutEntitiesBody, PutEntitiesResponse } from "./model.ts";
import { batchProblem, deleteEntity, getEntity, listEntities, upsertEntities } from "./store.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface EntitiesDeps {
  audit: AuditTrail;
  db: Db;
  sessions: Sessions;
}

const security = [{ bearer: [] as string[] }];
const tags = ["entities"];

export function entitiesRoutes(deps: EntitiesDeps) {
  return (
    new Elysia({ name: "entities", prefix: "/customer/entities" })
      // Before body validation: a stranger learns nothing about the schema.
      .use(sessionGuard(deps.sessions))
      .guard({ session: true })
      .put(
        "",
        async ({ customer, body, request }) => {
          const problem = batchProblem(body.entities);
          if (problem) throw new AppError("invalid_request", problem);
          await requireFeature(deps.db, customer.tenant_id, "custom_policy");
          return { ok: true as const, ...(await upsertEntities(deps.audit, byMember(customer, request), body.entities)) };
        },
        {
          body: PutEntitiesBody,
          parse: "json",
          response: { 200: PutEntitiesResponse, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 429: ErrorResponse },
          detail: { summary: "Create or replace up to 1,000 entities, all or none (feature custom_policy; counted by plan)", tags, security },
        },
      )
      .get(
        "",
        async ({ customer, query }) => {
          const limit = query.limit ?? 50;
          const after = query.cursor === undefined ? null : decodeEntityCursor(query.cursor);
          if (after === undefined) throw new AppError("invalid_request", "query/cursor: not a cursor this service gave out.");
          const rows = await listEntities(deps.db, customer.tenant_id, query.type ?? null, after, limit + 1);
          const entities = rows.slice(0, limit);
          const last = entities[entities.length - 1];
          const next_cursor = rows.length > limit && last ? encodeEntityCursor(last.type, last.id) : null;
          return { ok: true as const, entities, next_cursor };
        },
        {
          query: EntityListQuery,
          response: { 200: EntityList, 400: ErrorResponse, 401: ErrorResponse },
          detail: { summary: "The tenant's entities in (type, id) order, of one type when `type` is given (cursor pagination)", tags, security },
        },
      )
      .get("/:type/:id", async ({ customer, params }) => ({ ok: true as const, entity: await getEntity(deps.db, customer.tenant_id, params.type, params.id) }), {
        params: EntityParams,
        response: { 200: EntityResponse, 401: ErrorResponse, 404: ErrorResponse },
        detail: { summary: "One entity of the tenant", tags, security },
      })
      .delete(
        "/:type/:id",
        async ({ customer, params, request }) => {
          await requireFeature(deps.db, customer.tenant_id, "custom_policy");
          return { ok: true as const, ...(await deleteEntity(deps.audit, byMember(customer, request), params.type, params.id)) };
        },
        {
          params: EntityParams,
          response: { 200: DeleteEntityResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse },
          detail: { summary: "Delete one entity of the tenant (feature custom_policy)", tags, security },
        },
      )
  );
}
