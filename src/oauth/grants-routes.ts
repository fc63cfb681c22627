// /customer/oauth/grants: the agents people signed in to the tenant's remote gateways (docs/api.md,
// "OAuth for agents"). A member sees and revokes their own grants; an admin or owner all of them.
import { Elysia } from "elysia";
import { roleAtLeast } from "../accounts/roles.ts";
import type { Sessions } from "../accounts/sessions.ts";
import { byMember } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Db } from "../db/index.ts";
import { sessionGuard } from "../http/guards.ts";
import { ErrorResponse } from "../http/errors.ts";
import { listGrants, revokeGrant } from "./grants.ts";
import { GrantList, GrantParams, GrantRevoked } from "./model.ts";

export interface GrantsDeps {
  audit: AuditTrail;
  db: Db;
  now: () => Date;
  sessions: Sessions;
}

const security = [{ bearer: [] as string[] }];
const tags = ["oauth"];

export function grantsRoutes(deps: GrantsDeps) {
  return new Elysia({ name: "oauth-grants", prefix: "/customer/oauth/grants" })
    .use(sessionGuard(deps.sessions))
    .guard({ session: true })
    .get("", ({ customer }) => listGrants(deps.db, customer.tenant_id, roleAtLeast(customer.role, "admin") ? null : customer.member_id), {
      response: { 200: GrantList, 401: ErrorResponse, 403: ErrorResponse },
      detail: { summary: "The agents' grants: a member's own, or (admin, owner) every member's of the tenant, newest first", tags, security },
    })
    .delete("/:grant_id", ({ customer, params, request }) => revokeGrant(deps.audit, deps.now, byMember(customer, request), params.grant_id, roleAtLeast(customer.role, "admin")), {
      params: GrantParams,
      response: { 200: GrantRevoked, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse },
      detail: { summary: "Revoke a grant (your own; an admin or owner any of the tenant's): every token of it stops working at once", tags, security },
    });
}
