// Who may call which customer route: one table, read by Sessions.require() for every session
// request (docs/api.md, "Teams"). Roles are ranked; a route names the narrowest role it admits,
// and every role ranked above it may call it too. test/members/role-matrix.test.ts walks every
// route of the OpenAPI document that takes a session against this table, so a route added without
// an entry fails there; at run time such a route admits owners only (closed by default).
export const ROLES = ["owner", "admin", "developer", "approver", "viewer"] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { owner: 5, admin: 4, developer: 3, approver: 2, viewer: 1 };

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/** Whether `role` admits what `needed` admits. */
export function roleAtLeast(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

/**
 * "METHOD /route/pattern" (the route as Elysia names it) -> the narrowest role that may call it.
 * A person's own things (their password, second factor, sessions, email) are `viewer`: every
 * member may manage them. What a role may do beyond this table (an admin touching an owner, a
 * member leaving) is for the database's procedures to decide (sql/schema/03_members.sql,
 * sql/schema/05_members_and_keys.sql).
 */
export const ROUTE_ROLES: Readonly<Record<string, Role>> = {
  // The person's own account and sessions.
  "POST /auth/logout": "viewer",
  "POST /auth/verify-email/request": "viewer",
  "GET /auth/verify-email/status": "viewer",
  "GET /auth/tenants": "viewer",
  "POST /auth/switch": "viewer",
  "GET /customer/account": "viewer",
  "POST /customer/account/password": "viewer",
  "POST /customer/account/mfa/enroll": "viewer",
  "POST /customer/account/mfa/confirm": "viewer",
  "POST /customer/account/mfa/disable": "viewer",
  "POST /customer/account/mfa/recovery-codes": "viewer",
  // Members: reads for all; invitations and roles for admins (owners for owners: in SQL); leaving for anyone.
  "GET /customer/members": "viewer",
  "GET /customer/members/invitations": "admin",
  "POST /customer/members/invitations": "admin",
  "POST /customer/members/invitations/:invitation_id/revoke": "admin",
  "PATCH /customer/members/:member_id": "admin",
  "DELETE /customer/members/:member_id": "viewer",
  "GET /customer/settings": "viewer",
  "PUT /customer/settings": "owner",
  // Development only (no SMTP_URL): the person's own mail.
  "GET /dev/mailbox": "viewer",
  // Keys.
  "GET /customer/keys": "viewer",
  "POST /customer/keys": "developer",
  "PATCH /customer/keys/:key_id": "developer",
  "POST /customer/keys/:key_id/rotate": "developer",
  "POST /customer/keys/:key_id/revoke": "developer",
  // Plans and upgrades.
  "GET /customer/dashboard": "viewer",
  "GET /customer/usage": "viewer",
  "GET /customer/upgrades": "viewer",
  "POST /customer/upgrades/request": "owner",
  "POST /customer/upgrades/:id/cancel": "owner",
  // Policies: reads for all, drafts and dry runs for developers, what goes live for admins.
  "GET /customer/policy": "viewer",
  "PUT /customer/policy": "admin",
  "GET /customer/policy/versions": "viewer",
  "GET /customer/policy/versions/:version": "viewer",
  "POST /customer/policy/versions/:version/restore": "admin",
  "POST /customer/policy/test": "developer",
  "GET /customer/policy/tests": "viewer",
  "PUT /customer/policy/tests": "admin",
  "POST /customer/policy/impact": "developer",
  "POST /v1/simulate": "developer",
  "POST /api/simulate": "developer",
  // The receipt log: everyone reads it.
  "GET /customer/receipts": "viewer",
  "GET /customer/receipts/:receipt_id": "viewer",
  "GET /customer/receipts/:receipt_id/proof": "viewer",
  "GET /customer/receipts/checkpoint": "viewer",
  "GET /customer/receipts/consistency": "viewer",
  "GET /customer/receipts/export": "viewer",
  "GET /customer/log/tile/*": "viewer",
  // The audit trail (events of the same log): everyone reads it.
  "GET /customer/audit": "viewer",
  // Approvals: everyone reads them; who may vote is the rule's terms' to say (checked on the vote),
  // who may cancel is approval_settle()'s (an owner or admin).
  "GET /customer/approvals": "viewer",
  "GET /customer/approvals/:approval_id": "viewer",
  "POST /customer/approvals/:approval_id/votes": "viewer",
  "POST /customer/approvals/:approval_id/cancel": "viewer",
  "GET /customer/approvals/:approval_id/bundle": "viewer",
  // Entities: reads for all; writes, which decisions read as policies do, for admins.
  "GET /customer/entities": "viewer",
  "PUT /customer/entities": "admin",
  "GET /customer/entities/:type/:id": "viewer",
  "DELETE /customer/entities/:type/:id": "admin",
  // Webhooks: reads for all, endpoints and their secrets for admins.
  // Remote MCP gateways: reads for all, registering and their state for admins; each member's own
  // upstream secret for that member.
  "GET /customer/webhooks": "viewer",
  "POST /customer/webhooks": "admin",
  "POST /customer/webhooks/:id/rotate-secret": "admin",
  "DELETE /customer/webhooks/:id": "admin",
  "POST /customer/webhooks/:id/test": "admin",
  "GET /customer/webhooks/:id/deliveries": "viewer",
  // OAuth for agents: any member consents for themself and revokes their own grants (an admin or
  // owner any of the tenant's: src/oauth/grants.ts).
  "GET /oauth/consent": "viewer",
  "POST /oauth/consent": "viewer",
  "GET /customer/oauth/grants": "viewer",
  "DELETE /customer/oauth/grants/:grant_id": "viewer",
  "GET /customer/mcp/gateways": "viewer",
  "GET /customer/mcp/gateways/:id": "viewer",
  "POST /customer/mcp/gateways": "admin",
  "PATCH /customer/mcp/gateways/:id": "admin",
  "DELETE /customer/mcp/gateways/:id": "admin",
  "PUT /customer/mcp/gateways/:id/secret": "viewer",
  "DELETE /customer/mcp/gateways/:id/secret": "viewer",
};

/** The narrowest role a route admits; a route missing from the table admits owners only. */
export function requiredRole(method: string, route: string): Role {
  return ROUTE_ROLES[`${method.toUpperCase()} ${route}`] ?? "owner";
}
