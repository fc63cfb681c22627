// A person's tenants: /auth/tenants lists their memberships, /auth/switch opens a session of
// another one without a password, /auth/invitations/preview and /auth/invitations/accept join one
// (docs/api.md, "Teams").
import { Elysia } from "elysia";
import type { PasswordHasher, PasswordRules } from "./passwords.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Config } from "../config.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import type { Sessions } from "./sessions.ts";
import { sessionGuard } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { requestId } from "../http/request-state.ts";
import { newId } from "../ids.ts";
import { AcceptBody, AcceptResponse, InvitationPreview, PreviewBody, SwitchBody, TenantList } from "./tenant-model.ts";
import type { Role } from "./roles.ts";
import { securityEvent } from "./events.ts";
import { openSession } from "./lifecycle.ts";
import { LoginResponse } from "./model.ts";
import { spendMfaCode } from "./mfa.ts";
import { mfaSubject } from "./mfa-routes.ts";
import { addressLimit, clearCredentialAttempts, hashRequester, limitCredentialAttempt, loginSubject } from "./rate-limit.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface AccountsTenantDeps {
  audit: AuditTrail;
  config: Config;
  db: Db;
  log: Logger;
  now: () => Date;
  passwordRules: PasswordRules;
  passwords: PasswordHasher;
  sessions: Sessions;
  totpSecrets: SecretBox;
}

const bearer = [{ bearer: [] as string[] }] as Record<string, string[]>[];

export function tenantRoutes(deps: AccountsTenantDeps) {
  return new Elysia({ name: "accounts-tenants-all" }).use(invitationRoutes(deps)).use(tenantSessionRoutes(deps));
}

function invitationRoutes(deps: AccountsTenantDeps) {
  return new Elysia({ name: "accounts-tenants", prefix: "/auth" })
    .use(addressLimit(deps))
    .post(
      "/invitations/preview",
      async ({ body }) => {
        const row = (await deps.db.one("members/invitation_invitee", [body.token, deps.now().toISOString()]))!;
        const { invitation_id, email, expires_at } = row;
        // role: the invitations table's CHECK admits only the five roles.
        return { ok: true as const, invitation_id, email, role: row.role as Role, expires_at, account_exists: row.account_id !== null, mfa_required: row.mfa_active };
      },
      {
        body: PreviewBody,
        parse: "json",
        response: { 200: InvitationPreview, 400: ErrorResponse, 429: ErrorResponse },
        detail: {
          summary: "What an invitation's link is for (its email, role and expiry) and whether that email has an account: how the link's page asks for the right password",
          tags: ["accounts"],
          security: [],
        },
      },
    )
    .post(
      "/invitations/accept",
      async ({ body, request, route }) => {
        // With a session: the person signed in (the invitation's email) joins, no password. Without:
        // the password of the account the email has (a person who can no longer log in, removed
        // from their only tenant, still can join), or a new person's, whose email the link proves.
        const session = request.headers.has("authorization") ? await deps.sessions.ofRequest(request) : undefined;
        if (session && (body.password !== undefined || body.code !== undefined)) {
          throw new AppError("invalid_request", "body/password: signed in, you accept with your session and give no password or code.");
        }
        if (!session && body.password === undefined) {
          throw new AppError("invalid_request", "body/password: give your password (the one of your account, or a new account's), or accept signed in with your session.");
        }
        const now = deps.now();
        let accountId = session?.account_id ?? null;
        let passwordHash: string | null = null;
        let proved: { subject: string; mfa: boolean } | undefined;
        if (!session) {
          const invitee = (await deps.db.one("members/invitation_invitee", [body.token, now.toISOString()]))!;
          if (invitee.account_id === null) {
            await deps.passwordRules.assertAcceptable(body.password!);
            passwordHash = await deps.passwords.hash(body.password!, hashRequester(request));
          } else {
            proved = await proveAccount(deps, request, route, invitee, body.password!, body.code);
            accountId = invitee.account_id;
          }
        }
        // The new member joins and says so in the tenant's audit trail, in one transaction; a second
        // factor's code is spent in it too, so a refused acceptance spends none.
        const row = await deps.audit.tx(async (q, record) => {
          if (proved?.mfa) await spendMfaCode(deps, accountId!, body.code!, now, q);
          const row = (await q.one("members/invitation_accept", [body.token, accountId, newId("acct_"), passwordHash, newId("mbr_"), now.toISOString()]))!;
          await record({
            tenantId: row.tenant_id,
            actor: { member_id: row.member_id },
            requestId: requestId(request),
            event: "member.joined",
            target: { member_id: row.member_id, role: row.role, invitation_id: row.invitation_id },
          });
          return row;
        });
        if (proved) {
          await clearCredentialAttempts(deps, proved.subject);
          if (proved.mfa) await clearCredentialAttempts(deps, mfaSubject(row.account_id));
        }
        const epoch = (await deps.db.one("accounts/account_epoch", [row.account_id]))!.session_epoch;
        const opened = await openSession(deps, row.account_id, epoch, row.tenant_id);
        securityEvent(deps, request, "auth.invitation_accepted", { tenant_id: row.tenant_id, member_id: row.member_id, new_account: row.new_account, by_password: proved !== undefined });
        return { ok: true as const, ...opened };
      },
      {
        body: AcceptBody,
        parse: "json",
        response: { 200: AcceptResponse, 400: ErrorResponse, 401: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: {
          summary:
            "Accept an invitation: signed in as the invited email; or with the password of the account that email has (and a code when it has a second factor); or as a new person with a new password (the link proves the email). The answer is a session of that tenant",
          tags: ["accounts"],
          // Optional: signed in, the session accepts for the person it names.
          security: [{}, { bearer: [] }],
        },
      },
    );
}

/**
 * The invited email's account, proved by its password as a login proves it: the same counters
 * (per email and address, slowed per email), one bcrypt check, and 401 for a wrong password; an
 * account with a second factor also needs a code (checked when the acceptance spends it).
 */
async function proveAccount(
  deps: AccountsTenantDeps,
  request: Request,
  route: string,
  invitee: { account_id: string | null; email: string; password_hash: string | null; mfa_active: boolean },
  password: string,
  code: string | undefined,
): Promise<{ subject: string; mfa: boolean }> {
  const subject = await loginSubject(invitee.email);
  await limitCredentialAttempt(deps, request, subject, route);
  if (!(await deps.passwords.verify(password, invitee.password_hash!, hashRequester(request)))) {
    securityEvent(deps, request, "auth.invitation_failed", { account_id: invitee.account_id, reason: "wrong_password" });
    throw new AppError("unauthorized", "Wrong password for the account of the invited email.");
  }
  if (invitee.mfa_active) {
    if (code === undefined) throw new AppError("invalid_code", "This account has a second factor: send a code from its app (or a recovery code) as code too.");
    await limitCredentialAttempt(deps, request, mfaSubject(invitee.account_id!), route);
  }
  return { subject, mfa: invitee.mfa_active };
}

// Its own instance: the guard covers the routes of its instance, and accepting an
// invitation as a new person takes no session.
function tenantSessionRoutes(deps: AccountsTenantDeps) {
  return new Elysia({ name: "accounts-tenants-session", prefix: "/auth" })
    .use(addressLimit(deps))
    // The guard runs before Elysia validates the body: without a session the answer is 401, never 400 (src/http/guards.ts).
    .use(sessionGuard(deps.sessions))
    .guard({ session: true })
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
