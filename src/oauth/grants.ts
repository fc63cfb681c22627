// Grants: a person's consent to one agent for one gateway (docs/api.md, "OAuth for agents").
// Made on the consent page, listed and revoked by the person (an admin or owner: any of the
// tenant's), each change an event of the audit trail in the transaction of the change.
import type { ByMember } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Queryable } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { newId } from "../ids.ts";
import type { AuthorizationRequest } from "./authorize.ts";
import type { Grant } from "./model.ts";
import type { OAuthTokens } from "./tokens.ts";

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());
const notFound = () => new AppError("not_found", "No such grant.");

/** The consent: a grant and its one-time code, with the grant.created event. */
export async function consent(audit: AuditTrail, tokens: OAuthTokens, by: ByMember, req: AuthorizationRequest) {
  const grantId = newId("grt_");
  return audit.tx(async (q, record) => {
    const made = await tokens.grant(
      q,
      {
        tenantId: by.tenantId,
        gatewayId: req.gateway.gateway_id,
        memberId: by.actor.member_id,
        clientId: req.client.client_id,
        clientName: req.client.client_name,
        redirectUri: req.redirectUri,
        scope: req.scope,
        codeChallenge: req.codeChallenge,
      },
      grantId,
    );
    await record({ ...by, event: "oauth.grant_created", target: { grant_id: grantId, gateway_id: req.gateway.gateway_id, client_id: req.client.client_id, client_name: req.client.client_name, scope: req.scope } });
    return made;
  });
}

/** The tenant's grants (all: `memberId` null) or one member's, newest first. */
export async function listGrants(db: Queryable, tenantId: string, memberId: string | null) {
  const rows = await db.query("oauth/grants_list", [tenantId, memberId]);
  const grants: (typeof Grant.static)[] = rows.map((r) => ({
    grant_id: r.grant_id,
    gateway_id: r.gateway_id,
    gateway_name: r.gateway_name,
    member_id: r.member_id,
    member_email: r.member_email,
    client_id: r.client_id,
    client_name: r.client_name,
    scope: r.scope,
    status: r.status as "active" | "revoked",
    created_at: iso(r.created_at)!,
    last_used_at: iso(r.last_used_at),
    revoked_at: iso(r.revoked_at),
    revoked_reason: r.revoked_reason,
  }));
  return { ok: true as const, grants };
}

/**
 * Revokes a grant: the person's own, or (`anyOfTenant`, an admin or owner) any of the tenant's.
 * Every token of it stops working at once. Another member's grant is a 404 to a member.
 */
export async function revokeGrant(audit: AuditTrail, now: () => Date, by: ByMember, grantId: string, anyOfTenant: boolean) {
  if (!/^grt_[0-9A-Za-z]{22}$/.test(grantId)) throw notFound();
  await audit.tx(async (q, record) => {
    const grant = await q.one("oauth/grant_get", [by.tenantId, grantId]);
    if (!grant || (!anyOfTenant && grant.member_id !== by.actor.member_id)) throw notFound();
    const done = await q.one("oauth/grant_revoke", [by.tenantId, grantId, by.actor.member_id, "revoked", now()]);
    if (done?.revoked) await record({ ...by, event: "oauth.grant_revoked", target: { grant_id: grantId, gateway_id: grant.gateway_id, client_id: grant.client_id, member_id: grant.member_id, reason: "revoked" } });
  });
  return { ok: true as const, grant_id: grantId, status: "revoked" as const };
}
