// Every protected route through the shared authentication suite (test/helpers/auth-suite.ts):
// no credential, bad credential, revoked key, another tenant's ids. Add new routes here: the last
// test fails for a route of the OpenAPI document that takes a credential and is missing here.
import { expect, test } from "bun:test";
import { authSuite, makeFixture, PLACEHOLDER, type Fixture, type ProtectedRoute } from "../helpers/auth-suite.ts";
import { DEFAULT_POLICY } from "../../src/decide/policy.ts";
import { call, subjectOf, uniqueEmail } from "../helpers/service.ts";
import { setPlan } from "../helpers/customer.ts";
import { addGateway, grantWithTokens } from "../helpers/oauth.ts";

let shared: Promise<Fixture> | undefined;
const fixture = () =>
  (shared ??= makeFixture(async (f) => {
    const receipt = await call("POST", "/v1/protect", { json: { action: "document.read" }, headers: { "x-api-key": f.owner.apiKey } });
    // Keys of their own for rotate and revoke: the owner's accepted call changes them.
    const jwt = { authorization: `Bearer ${f.owner.token}` };
    const [toRotate, toRevoke, toUpdate] = await Promise.all(["rotate me", "revoke me", "update me"].map((label) => call("POST", "/customer/keys", { json: { label }, headers: jwt })));
    // On pro before the pending request (an approved upgrade, as setPlan makes, needs none pending).
    await setPlan(f.owner.tenantId, "pro");
    const upgrade = await call("POST", "/customer/upgrades/request", { json: { requested_plan: "enterprise", reason: "suite" }, headers: jwt });
    const invitation = await call("POST", "/customer/members/invitations", { json: { email: uniqueEmail("suite"), role: "viewer" }, headers: jwt });
    // A pending approval: the owner's tenant on pro with a rule that holds every refund for people.
    const held = { default_effect: "deny", default_reason: "no", rules: [{ id: "held", effect: "require_approval", reason: "held", when: { actions: ["refund.issue"] } }, ...DEFAULT_POLICY.rules] };
    expect((await call("PUT", "/customer/policy", { json: { document: held }, headers: jwt })).status).toBe(200);
    const asked = await call("POST", "/v1/protect", { json: { action: "refund.issue" }, headers: { "x-api-key": f.owner.apiKey } });
    // A public address literal: accepted without DNS; the shared service delivers nothing.
    const webhook = await call("POST", "/customer/webhooks", { json: { url: "https://93.184.215.14/suite", events: ["*"] }, headers: jwt });
    const gateway = await call("POST", "/customer/mcp/gateways", { json: { name: "suite", upstream_url: "https://93.184.215.14/mcp", upstream_auth: "per_member" }, headers: jwt });
    const entities = [{ type: "suite", id: "read", attributes: {} }, { type: "suite", id: "delete", attributes: {} }];
    expect((await call("PUT", "/customer/entities", { json: { entities }, headers: jwt })).status).toBe(200);
    // A grant of the owner's to an agent, on a gateway of the tenant.
    const oauthGrant = await grantWithTokens(await addGateway(f.owner.tenantId), subjectOf(f.owner.token).member_id);
    return {
      grant: oauthGrant.grant_id,
      receipt: receipt.body.receipt_id,
      rotate: toRotate.body.key_id,
      revoke: toRevoke.body.key_id,
      update: toUpdate.body.key_id,
      upgrade: upgrade.body.request_id,
      invitation: invitation.body.invitation_id,
      approval: asked.body.approval.approval_id,
      webhook: webhook.body.webhook_id,
      gateway: gateway.body.gateway_id,
      entityType: "suite",
      entityRead: "read",
      entityDelete: "delete",
      // The owner is the tenant's only owner: removing or demoting them is refused (409), nothing changes.
      member: subjectOf(f.owner.token).member_id,
    };
  }));

// The AuthZEN specification's request example.
const AUTHZEN_EXAMPLE = { subject: { type: "user", id: "alice@example.com" }, resource: { type: "account", id: "123" }, action: { name: "can_read", properties: { method: "GET" } }, context: { time: "1985-10-26T01:22-07:00" } };

const ROUTES: ProtectedRoute[] = [
  // Keys
  { method: "POST", path: () => "/customer/keys", auth: "jwt", json: () => ({ label: "suite" }) },
  { method: "GET", path: () => "/customer/keys", auth: "jwt" },
  { method: "POST", path: (f) => `/customer/keys/${f.ids.revoke}/revoke`, auth: "jwt", owned: true },
  { method: "POST", path: (f) => `/customer/keys/${f.ids.rotate}/rotate`, auth: "jwt", owned: true },
  { method: "PATCH", path: (f) => `/customer/keys/${f.ids.update}`, auth: "jwt", json: () => ({ metadata: { suite: "yes" } }), owned: true },
  // Policy
  { method: "GET", path: () => "/customer/policy", auth: "jwt" },
  { method: "PUT", path: () => "/customer/policy", auth: "jwt", json: () => ({ document: DEFAULT_POLICY }) },
  // Receipts
  { method: "GET", path: () => "/customer/receipts", auth: "jwt" },
  { method: "GET", path: (f) => `/customer/receipts/${f.ids.receipt}`, auth: "jwt", owned: true },
  { method: "GET", path: (f) => `/customer/receipts/${f.ids.receipt}/proof`, auth: "jwt", owned: true },
  { method: "GET", path: () => "/customer/receipts/checkpoint", auth: "jwt" },
  { method: "GET", path: () => "/customer/receipts/consistency?from=1", auth: "jwt" },
  { method: "GET", path: () => "/customer/receipts/export", auth: "jwt" },
  { method: "GET", path: () => "/customer/log/tile/0/000.p/1", auth: "jwt" },
  // Policy versions, tests, impact, simulate
  { method: "GET", path: () => "/customer/policy/versions", auth: "jwt" },
  { method: "GET", path: () => "/customer/policy/versions/1", auth: "jwt" },
  { method: "POST", path: () => "/customer/policy/versions/1/restore", auth: "jwt" },
  { method: "POST", path: () => "/customer/policy/test", auth: "jwt", json: () => ({ document: DEFAULT_POLICY, cases: [] }) },
  { method: "GET", path: () => "/customer/policy/tests", auth: "jwt" },
  { method: "PUT", path: () => "/customer/policy/tests", auth: "jwt", json: () => ({ cases: [] }) },
  { method: "POST", path: () => "/customer/policy/impact", auth: "jwt", json: () => ({ document: DEFAULT_POLICY }) },
  { method: "POST", path: () => "/v1/simulate", auth: "either", json: () => ({ preset: "small_payment" }) },
  { method: "POST", path: () => "/api/simulate", auth: "either", json: () => ({ preset: "small_payment" }) },
  // The audit trail
  { method: "GET", path: () => "/customer/audit", auth: "jwt" },
  // Entities (a stranger's delete is refused by the feature gate first on free: test/entities/entities.test.ts checks 404 across tenants)
  { method: "PUT", path: () => "/customer/entities", auth: "jwt", json: () => ({ entities: [{ type: "suite", id: "put", attributes: {} }] }) },
  { method: "GET", path: () => "/customer/entities", auth: "jwt" },
  { method: "GET", path: (f) => `/customer/entities/${f.ids.entityType}/${f.ids.entityRead}`, auth: "jwt", owned: true },
  { method: "DELETE", path: (f) => `/customer/entities/${f.ids.entityType}/${f.ids.entityDelete}`, auth: "jwt" },
  // Approvals: the agent's key reads and cancels, people read, vote and take the bundle
  { method: "GET", path: (f) => `/v1/approvals/${f.ids.approval}`, auth: "key", owned: true },
  { method: "POST", path: (f) => `/v1/approvals/${f.ids.approval}/cancel`, auth: "key", owned: true },
  { method: "GET", path: () => "/customer/approvals", auth: "jwt" },
  { method: "GET", path: (f) => `/customer/approvals/${f.ids.approval}`, auth: "jwt", owned: true },
  { method: "POST", path: (f) => `/customer/approvals/${f.ids.approval}/votes`, auth: "jwt", json: () => ({ vote: "approve", action_hash: `0x${"0".repeat(64)}` }), owned: true },
  { method: "GET", path: (f) => `/customer/approvals/${f.ids.approval}/bundle`, auth: "jwt", owned: true },
  { method: "POST", path: (f) => `/customer/approvals/${f.ids.approval}/cancel`, auth: "jwt", owned: true },
  // Webhooks (the owner's delete runs last in its describe: the other routes of the endpoint come first)
  { method: "POST", path: () => "/customer/webhooks", auth: "jwt", json: () => ({ url: "https://93.184.215.14/suite-2", events: ["*"] }) },
  { method: "GET", path: () => "/customer/webhooks", auth: "jwt" },
  { method: "POST", path: (f) => `/customer/webhooks/${f.ids.webhook}/rotate-secret`, auth: "jwt", owned: true },
  { method: "POST", path: (f) => `/customer/webhooks/${f.ids.webhook}/test`, auth: "jwt", owned: true },
  { method: "GET", path: (f) => `/customer/webhooks/${f.ids.webhook}/deliveries`, auth: "jwt", owned: true },
  { method: "DELETE", path: (f) => `/customer/webhooks/${f.ids.webhook}`, auth: "jwt", owned: true },
  // Remote MCP gateways' registry (their endpoints take OAuth tokens: see ELSEWHERE)
  { method: "POST", path: () => "/customer/mcp/gateways", auth: "jwt", json: () => ({ name: "suite-2", upstream_url: "https://93.184.215.14/mcp", upstream_auth: "none" }) },
  { method: "GET", path: () => "/customer/mcp/gateways", auth: "jwt" },
  { method: "GET", path: (f) => `/customer/mcp/gateways/${f.ids.gateway}`, auth: "jwt", owned: true },
  { method: "PUT", path: (f) => `/customer/mcp/gateways/${f.ids.gateway}/secret`, auth: "jwt", json: () => ({ secret: "suite-secret" }), owned: true },
  { method: "DELETE", path: (f) => `/customer/mcp/gateways/${f.ids.gateway}/secret`, auth: "jwt", owned: true },
  { method: "PATCH", path: (f) => `/customer/mcp/gateways/${f.ids.gateway}`, auth: "jwt", json: () => ({ enabled: true }), owned: true },
  { method: "DELETE", path: (f) => `/customer/mcp/gateways/${f.ids.gateway}`, auth: "jwt", owned: true },
  // OAuth for agents: the consent (the console's calls) and the grants.
  { method: "GET", path: () => "/oauth/consent?client_id=cli_0000000000000000000000", auth: "jwt" },
  { method: "POST", path: () => "/oauth/consent", auth: "jwt", json: () => ({ client_id: "cli_0000000000000000000000", redirect_uri: "https://agent.example/cb", approve: true }) },
  { method: "GET", path: () => "/customer/oauth/grants", auth: "jwt" },
  { method: "DELETE", path: (f) => `/customer/oauth/grants/${f.ids.grant}`, auth: "jwt", owned: true },
  // Members, invitations, settings, tenants
  { method: "GET", path: () => "/customer/members", auth: "jwt" },
  { method: "POST", path: () => "/customer/members/invitations", auth: "jwt", json: () => ({ email: uniqueEmail("suite"), role: "viewer" }) },
  { method: "GET", path: () => "/customer/members/invitations", auth: "jwt" },
  { method: "POST", path: (f) => `/customer/members/invitations/${f.ids.invitation}/revoke`, auth: "jwt", owned: true },
  { method: "PATCH", path: (f) => `/customer/members/${f.ids.member}`, auth: "jwt", json: () => ({ role: "viewer" }), owned: true },
  { method: "DELETE", path: (f) => `/customer/members/${f.ids.member}`, auth: "jwt", owned: true },
  { method: "GET", path: () => "/customer/settings", auth: "jwt" },
  { method: "PUT", path: () => "/customer/settings", auth: "jwt", json: () => ({ allow_self_approval: false }) },
  { method: "GET", path: () => "/auth/tenants", auth: "jwt" },
  { method: "POST", path: (f) => "/auth/switch", auth: "jwt", json: (f) => ({ tenant_id: f.owner.tenantId }) },
  // The person's account and sessions
  { method: "GET", path: () => "/customer/account", auth: "jwt" },
  { method: "GET", path: () => "/auth/verify-email/status", auth: "jwt" },
  { method: "POST", path: () => "/auth/verify-email/request", auth: "jwt", json: () => ({}) },
  { method: "POST", path: () => "/auth/logout", auth: "jwt", json: () => ({}), acceptedElsewhere: "ends the fixture's session: test/accounts/session-end.test.ts" },
  { method: "POST", path: () => "/customer/account/password", auth: "jwt", json: () => ({ current_password: "x", new_password: "y" }), acceptedElsewhere: "a new password ends every other session: test/accounts/account.test.ts" },
  { method: "POST", path: () => "/customer/account/mfa/enroll", auth: "jwt", json: () => ({}), acceptedElsewhere: "needs the person's password and app: test/accounts/mfa.test.ts" },
  { method: "POST", path: () => "/customer/account/mfa/confirm", auth: "jwt", json: () => ({ code: "000000" }), acceptedElsewhere: "needs a live code: test/accounts/mfa.test.ts" },
  { method: "POST", path: () => "/customer/account/mfa/disable", auth: "jwt", json: () => ({ password: "x", code: "000000" }), acceptedElsewhere: "needs a live code: test/accounts/mfa.test.ts" },
  { method: "POST", path: () => "/customer/account/mfa/recovery-codes", auth: "jwt", json: () => ({ password: "x", code: "000000" }), acceptedElsewhere: "needs a live code: test/accounts/mfa.test.ts" },
  // Plans
  { method: "POST", path: () => "/customer/upgrades/request", auth: "jwt", json: () => ({ requested_plan: "pro", reason: "suite" }) },
  { method: "GET", path: () => "/customer/upgrades", auth: "jwt" },
  { method: "POST", path: (f) => `/customer/upgrades/${f.ids.upgrade}/cancel`, auth: "jwt", owned: true },
  { method: "GET", path: () => "/customer/dashboard", auth: "jwt" },
  { method: "GET", path: () => "/customer/usage", auth: "jwt" },
  // Decisions
  { method: "POST", path: () => "/v1/protect", auth: "key", json: () => ({ action: "document.read" }) },
  { method: "POST", path: () => "/v1/execute", auth: "key", json: (f) => ({ receipt_id: f.ids.receipt }), owned: true },
  { method: "POST", path: () => "/v1/verify", auth: "key", json: () => ({ receipt: {} }) },
  // AuthZEN (the well-known configuration is public)
  { method: "POST", path: () => "/access/v1/evaluation", auth: "key", json: () => AUTHZEN_EXAMPLE },
  { method: "POST", path: () => "/access/v1/evaluations", auth: "key", json: () => ({ ...AUTHZEN_EXAMPLE, evaluations: [{}, { action: { name: "can_edit" } }] }) },
  { method: "POST", path: () => "/access/v1/search/subject", auth: "key", json: () => ({ ...AUTHZEN_EXAMPLE, subject: { type: "user" } }) },
  { method: "POST", path: () => "/access/v1/search/resource", auth: "key", json: () => ({ ...AUTHZEN_EXAMPLE, resource: { type: "account" } }) },
  { method: "POST", path: () => "/access/v1/search/action", auth: "key", json: () => ({ subject: AUTHZEN_EXAMPLE.subject, resource: AUTHZEN_EXAMPLE.resource }) },
];

authSuite(ROUTES, fixture);

/** Routes with a credential that this suite cannot call, and the test that checks their authentication. */
const ELSEWHERE = new Map([
  // The shared test service has SMTP_URL, so the development mailbox does not exist there (404).
  ["GET /dev/mailbox", "test/mail/dev-mail.test.ts"],
  // OAuth access tokens for one gateway, not a session or key: no token, a bad one, another
  // gateway's or tenant's, a revoked one, a missing scope.
  ["POST /mcp/{}", "test/gateways/gateways.test.ts"],
  ["GET /mcp/{}", "test/gateways/gateways.test.ts"],
  ["DELETE /mcp/{}", "test/gateways/gateways.test.ts"],
]);

test("every route of the OpenAPI document that takes a credential is in this suite", async () => {
  const doc = (await call("GET", "/openapi.json")).body as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  // Ids as {}: the suite names them after its fixture, the document after the route.
  const shape = (method: string, path: string) => `${method.toUpperCase()} ${path.split("?")[0].replace(/\{[^}]*\}/g, "{}")}`;
  // Public operations say `security: []`; one that also takes an optional session lists `{}`.
  const secured = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, op]) => (op.security?.length ?? 0) > 0 && !op.security!.some((s) => Object.keys(s as object).length === 0))
      .map(([method]) => shape(method, path)),
  );
  const suite = new Set([...ELSEWHERE.keys(), ...ROUTES.map((r) => shape(r.method, r.path(PLACEHOLDER).replace(/\/tile\/.*$/, "/tile/{}").replace(/\/versions\/1(\/|$)/, "/versions/{}$1")))]);
  expect(secured.length).toBeGreaterThan(40);
  expect(secured.filter((route) => !suite.has(route))).toEqual([]);
});
