// A person's tenants: /auth/tenants lists their memberships, /auth/switch opens a session of
// another one without a password, /auth/invitations/accept joins one (docs/api.md, "Teams").
import { Elysia } from "elysia";
import type { Deps } from "../app/deps.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { requestId } from "../http/request-state.ts";
import { newId } from "../ids.ts";
import { AcceptBody, AcceptResponse, SwitchBody, TenantList } from "./tenant-model.ts";
import type { Role } from "./roles.ts";
import { securityEvent } from "./events.ts";
import { openSession } from "./lifecycle.ts";
import { LoginResponse } from "./model.ts";
import { addressLimit } from "./rate-limit.ts";

const bearer = [{ bearer: [] as string[] }] as Record<string, string[]>[];

export function tenantRoutes(deps: Deps) {
  return new Elysia({ name: "accounts-tenants-all" }).use(invitationRoutes(deps)).use(tenantSessionRoutes(deps));
}

function invitationRoutes(deps: Deps) {
  return new Elysia({ name: "accounts-tenants", prefix: "/auth" })
    .use(addressLimit(deps))
    .post(
      "/invitations/accept",
      async ({ body, request }) => {
        // With a session: the person signed in (the invitation's email) joins, no password. Without:
        // a new person, whose email the link proves, sets a password.
        const session = request.headers.has("authorization") ? await deps.sessions.ofRequest(request) : undefined;
        if (session && body.password !== undefined) throw new AppError("invalid_request", "body/password: signed in, you accept with your session and give no password.");
        if (!session && body.password === undefined) throw new AppError("invalid_request", "body/password: a new account needs a password (or log in and accept with your session).");
        let passwordHash: string | null = null;
        if (body.password !== undefined) {
          await deps.passwordRules.assertAcceptable(body.password);
          passwordHash = await deps.passwords.hash(body.password);
        }
        // The new member joins and says so in the tenant's audit trail, in one transaction.
        const row = await deps.audit.tx(async (q, record) => {
          const row = (await q.one("members/invitation_accept", [
            body.token, session?.account_id ?? null, newId("acct_"), passwordHash, newId("mbr_"), deps.now().toISOString(),
          ]))!;
          await record({
            tenantId: row.tenant_id,
            actor: { member_id: row.member_id },
            requestId: requestId(request),
            event: "member.joined",
            target: { member_id: row.member_id, role: row.role, invitation_id: row.invitation_id },
          });
          return row;
        });
        const epoch = (await deps.db.one("accounts/account_epoch", [row.account_id]))!.session_epoch;
        const opened = await openSession(deps, row.account_id, epoch, row.tenant_id);
        securityEvent(deps, request, "auth.invitation_accepted", { tenant_id: row.tenant_id, member_id: row.member_id, new_account: row.new_account });
        return { ok: true as const, ...opened };
      },
      {
        body: AcceptBody,
        parse: "json",
        response: { 200: AcceptResponse, 400: ErrorResponse, 401: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: {
          summary: "Accept an invitation: as a new person with a password (the link proves the email), or signed in as the invited email; the answer is a session of that tenant",
          tags: ["accounts"],
          // Optional: signed in, the session accepts for the person it names.
          security: [{}, { bearer: [] }],
        },
      },
    );
}

// Its own instance: a derive applies to every route of the instance it is in, and accepting an
// invitation as a new person takes no session.
function tenantSessionRoutes(deps: Deps) {
  return new Elysia({ name: "accounts-tenants-session", prefix: "/auth" })
    .use(addressLimit(deps))
    // Elysia derives before it validates the body: without a session the answer is 401, never 400.
    .derive(async ({ request, route }) => ({ customer: await deps.sessions.require(request, route) }))
    .get(
      "/tenants",
      async ({ customer: session }) => {
        const rows = await deps.db.query("accounts/tenants", [session.account_id]);
        return { ok: true as const, tenants: rows.map((r) => ({ ...r, role: r.role as Role, current: r.tenant_id === session.tenant_id })) };
      },
      {
        response: { 200: TenantList, 401: ErrorResponse, 429: ErrorResponse },
        detail: { summary: "The tenants the signed-in person is a member of, with the role in each", tags: ["accounts"], security: bearer },
      },
    )
    .post(
      "/switch",
      async ({ body, request, customer: session }) => {
        const epoch = (await deps.db.one("accounts/account_epoch", [session.account_id]))!.session_epoch;
        const opened = await openSession(deps, session.account_id, epoch, body.tenant_id);
        securityEvent(deps, request, "auth.tenant_switched", { tenant_id: opened.tenant_id, member_id: opened.member_id, from_tenant_id: session.tenant_id });
        return { ok: true as const, ...opened };
      },
      {
        body: SwitchBody,
        parse: "json",
        response: { 200: LoginResponse, 400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse, 429: ErrorResponse },
        detail: { summary: "A session of another tenant the person is a member of (404 for any other); the current one stays valid", tags: ["accounts"], security: bearer },
      },
    );
}
