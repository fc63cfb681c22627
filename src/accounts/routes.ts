// /auth: signup and login (the spec's Authentication; docs/api.md, Accounts and sessions), and the verification and reset routes.
// Every /auth route counts against the per-address brute-force limit (./rate-limit.ts).
import { Elysia, t } from "elysia";
import type { PasswordHasher, PasswordRules } from "./passwords.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Config } from "../config.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import type { Mailer } from "../mail/worker.ts";
import type { SignupEmails } from "./email.ts";
import type { Sessions } from "./sessions.ts";
import { sessionGuard } from "../http/guards.ts";
import { AppError, ErrorResponse, toAppError } from "../http/errors.ts";
import { requestId } from "../http/request-state.ts";
import { newId } from "../ids.ts";
import { hashSecret, newSecret, secretHint } from "../keys/secret.ts";
import { normaliseEmail } from "./email.ts";
import { securityEvent } from "./events.ts";
import { issueVerification, openSession } from "./lifecycle.ts";
import { Accepted, LoginBody, LoginMfaResponse, LoginResponse, LogoutBody, SignupBody, SignupResponse } from "./model.ts";
import { AnswerTime } from "./answer-time.ts";
import { addressLimit, clearCredentialAttempts, limitCredentialAttempt, loginSubject, hashRequester } from "./rate-limit.ts";
import { mfaVerifyRoutes } from "./mfa-routes.ts";
import { resetPasswordRoutes } from "./reset-routes.ts";
import { verifyEmailRoutes } from "./verify-routes.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface AccountsDeps {
  audit: AuditTrail;
  config: Config;
  db: Db;
  dummyPasswordHash: Promise<string>;
  log: Logger;
  mail: Mailer;
  mailTokens: SecretBox;
  now: () => Date;
  passwordRules: PasswordRules;
  passwords: PasswordHasher;
  sessions: Sessions;
  signupEmails: SignupEmails;
  totpSecrets: SecretBox;
}

const bearer = [{ bearer: [] as string[] }] as Record<string, string[]>[];

export function accountsRoutes(deps: AccountsDeps) {
  return new Elysia({ name: "accounts" })
    .use(signupLoginRoutes(deps))
    .use(logoutRoutes(deps))
    .use(mfaVerifyRoutes(deps))
    .use(verifyEmailRoutes(deps))
    .use(resetPasswordRoutes(deps));
}

function signupLoginRoutes(deps: AccountsDeps) {
  // A taken email's 409 waits as long as a signup of late took (./answer-time.ts).
  const signupTime = new AnswerTime();
  return new Elysia({ name: "accounts-signup-login", prefix: "/auth" })
    .use(addressLimit(deps))
    .post(
      "/signup",
      async ({ body, set, request }) => {
        const email = await deps.signupEmails.accept(body.email);
        await deps.passwordRules.assertAcceptable(body.password);
        // Hash before the insert, so a taken email costs the same time as a new one.
        const passwordHash = await deps.passwords.hash(body.password, hashRequester(request));
        const tenantId = newId("cust_");
        const accountId = newId("acct_");
        const memberId = newId("mbr_");
        const keyId = newId("key_");
        const secret = newSecret();
        const keyHash = await hashSecret(secret);
        const startedAt = performance.now();
        // The verification email and the first key's key.created event are written in the signup's
        // own transaction: no account without them (docs/api.md, "The audit trail").
        try {
          await deps.audit.tx(async (q, record) => {
            await q.query("accounts/signup", [tenantId, accountId, memberId, email, passwordHash, keyId, keyHash, secretHint(secret)]);
            await record({ tenantId, actor: { member_id: memberId }, requestId: requestId(request), event: "key.created", target: { key_id: keyId, label: "default" } });
            await issueVerification(q, deps.mailTokens, accountId, deps.now());
          });
        } catch (error) {
          if (toAppError(error).error.code === "email_taken") await signupTime.pad(startedAt);
          throw error;
        }
        deps.mail.nudge();
        securityEvent(deps, request, "auth.signup", { tenant_id: tenantId, member_id: memberId, email });
        const { token } = await deps.sessions.issue(
          { account_id: accountId, account_epoch: 0, tenant_id: tenantId, member_id: memberId, member_epoch: 0 },
          deps.now(),
        );
        signupTime.record(performance.now() - startedAt);
        set.status = 201;
        return { ok: true as const, token, tenant_id: tenantId, api_key: secret, email_verified: false, member_id: memberId, role: "owner" as const };
      },
      {
        body: SignupBody,
        parse: "json",
        response: { 201: SignupResponse, 400: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: { summary: "Create an account, its first API key and a session; sends a verification email", tags: ["accounts"], security: [] },
      },
    )
    .post(
      "/login",
      async ({ body, request, route }) => {
        const email = normaliseEmail(body.email);
        const subject = await loginSubject(email);
        await limitCredentialAttempt(deps, request, subject, route);
        const row = await deps.db.one("accounts/find_for_login", [email]);
        // An unknown email still pays for one bcrypt verification, so timing does not tell
        // whether an account exists. Both wait for the dummy hash (made at start-up), so not even
        // the first moments after a start tell them apart.
        const dummy = await deps.dummyPasswordHash;
        const matches = await deps.passwords.verify(body.password, row?.password_hash ?? dummy, hashRequester(request));
        if (!row || !matches) {
          securityEvent(deps, request, "auth.login_failed", { account_id: row?.account_id, email, reason: row ? "wrong_password" : "unknown_email" });
          throw new AppError("unauthorized", "Wrong email or password.");
        }
        if (row.mfa_active) {
          // The counts are cleared only once the second factor is passed too.
          const challenge = await deps.sessions.issueMfaChallenge(row.account_id, row.session_epoch, deps.now());
          securityEvent(deps, request, "auth.mfa_challenged", { account_id: row.account_id });
          return { ok: true as const, mfa_required: true as const, mfa_token: challenge.token, expires_at: challenge.expires_at };
        }
        await clearCredentialAttempts(deps, subject);
        const session = await openSession(deps, row.account_id, row.session_epoch);
        securityEvent(deps, request, "auth.login_succeeded", { tenant_id: session.tenant_id, member_id: session.member_id });
        return { ok: true as const, ...session };
      },
      {
        body: LoginBody,
        parse: "json",
        response: { 200: t.Union([LoginResponse, LoginMfaResponse]), 400: ErrorResponse, 401: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: { summary: "Log in: a JWT valid 24 hours, or a second-factor challenge when one is on", tags: ["accounts"], security: [] },
      },
    );
}

// Its own instance: the guard covers the routes of its instance, and signing up and
// logging in take no session.
function logoutRoutes(deps: AccountsDeps) {
  return new Elysia({ name: "accounts-logout", prefix: "/auth" })
    .use(addressLimit(deps))
    // The guard runs before Elysia validates the body: without a session the answer is 401, never 400 (src/http/guards.ts).
    .use(sessionGuard(deps.sessions))
    .guard({ session: true })
    .post(
      "/logout",
      async ({ body, request, customer: session }) => {
        const all = body?.all === true;
        await deps.sessions.signOut(session, all, deps.now());
        securityEvent(deps, request, "auth.logout", { tenant_id: session.tenant_id, all });
        return { ok: true as const };
      },
      {
        body: LogoutBody,
        parse: "json",
        response: { 200: Accepted, 400: ErrorResponse, 401: ErrorResponse, 429: ErrorResponse },
        detail: { summary: "Sign out: this token (all: every token of the account) stops working at once", tags: ["accounts"], security: bearer },
      },
    );
}
