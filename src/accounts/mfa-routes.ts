// The second factor: enrol, confirm, disable (JWT, /customer/account/mfa) and the login's second
// step (/auth/mfa/verify). Every route counts against the per-address limit.
import { Elysia } from "elysia";
import type { PasswordHasher } from "./passwords.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Config } from "../config.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import type { Sessions } from "./sessions.ts";
import { sessionGuard } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { requestId } from "../http/request-state.ts";
import { securityEvent } from "./events.ts";
import { credentials, openSession } from "./lifecycle.ts";
import { confirmMfa, disableMfa, enrollMfa, replaceRecoveryCodes, spendMfaCode } from "./mfa.ts";
import { Accepted, EmptyBody, LoginResponse, MfaConfirmBody, MfaConfirmResponse, MfaDisableBody, MfaEnrollResponse, MfaVerifyBody } from "./model.ts";
import { addressLimit, clearCredentialAttempts, limitCredentialAttempt, loginSubject, hashRequester } from "./rate-limit.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface AccountsMfaDeps {
  audit: AuditTrail;
  config: Config;
  db: Db;
  log: Logger;
  now: () => Date;
  passwords: PasswordHasher;
  sessions: Sessions;
  totpSecrets: SecretBox;
}

const bearer = [{ bearer: [] as string[] }] as Record<string, string[]>[];
/** The counters of code guesses for a person (a login's second step, an invitation accepted with a code). */
export const mfaSubject = (accountId: string) => `mfa:${accountId}`;

export function mfaVerifyRoutes(deps: AccountsMfaDeps) {
  return new Elysia({ name: "accounts-mfa-verify", prefix: "/auth/mfa" })
    .use(addressLimit(deps))
    .post(
      "/verify",
      async ({ body, request, route }) => {
        const challenge = await deps.sessions.readMfaChallenge(body.mfa_token, deps.now());
        const { account_id, session_epoch } = challenge;
        // Guessing codes counts like guessing passwords: per (account, address), slowed per account.
        await limitCredentialAttempt(deps, request, mfaSubject(account_id), route);
        try {
          // The code and the challenge are spent together: one mfa_token gives one session, and a
          // second exchange of it (with another code) spends nothing.
          await deps.db.tx(async (q) => {
            await spendMfaCode(deps, account_id, body.code, deps.now(), q);
            await q.query("accounts/mfa_challenge_spend", [account_id, challenge.jti, challenge.expires_at.toISOString()]);
          });
        } catch (err) {
          securityEvent(deps, request, "auth.mfa_failed", { account_id, step: "login" });
          throw err;
        }
        const { email } = (await credentials(deps.db, account_id))!;
        await clearCredentialAttempts(deps, mfaSubject(account_id));
        await clearCredentialAttempts(deps, await loginSubject(email));
        const session = await openSession(deps, account_id, session_epoch);
        securityEvent(deps, request, "auth.login_succeeded", { tenant_id: session.tenant_id, member_id: session.member_id, mfa: true });
        return { ok: true as const, ...session };
      },
      {
        body: MfaVerifyBody,
        parse: "json",
        response: { 200: LoginResponse, 400: ErrorResponse, 401: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: { summary: "The login's second step: a TOTP code or an unused recovery code for the mfa_token", tags: ["accounts"], security: [] },
      },
    );
}

/** Registered after the customer's password route, under the same address limit. */
export function mfaAccountRoutes(deps: AccountsMfaDeps) {
  /** Turning the factor off or replacing its recovery codes: counted like a code guess, then the password (401 when wrong). */
  const checkPasswordForMfa = async (request: Request, route: string, accountId: string, password: string, step: string) => {
    await limitCredentialAttempt(deps, request, mfaSubject(accountId), route);
    const current = (await credentials(deps.db, accountId))!;
    if (!(await deps.passwords.verify(password, current.password_hash, hashRequester(request)))) {
      securityEvent(deps, request, "auth.mfa_failed", { account_id: accountId, step, reason: "wrong_password" });
      throw new AppError("unauthorized", "The password is not correct.");
    }
  };
  return new Elysia({ name: "accounts-mfa", prefix: "/mfa" })
    // Every second-factor route takes a password or a code: limited per client address.
    .use(addressLimit(deps))
    // The guard runs before Elysia validates the body: without a session the answer is 401, never 400 (src/http/guards.ts).
    .use(sessionGuard(deps.sessions))
    .guard({ session: true })
    .post(
      "/enroll",
      async ({ request, customer }) => {
        const { account_id, tenant_id } = customer;
        const { email } = (await credentials(deps.db, account_id))!;
        const { secret, otpauth_url } = await enrollMfa(deps, account_id, email, deps.now());
        securityEvent(deps, request, "auth.mfa_enrolled", { tenant_id, account_id });
        return { ok: true as const, secret, otpauth_url };
      },
      {
        body: EmptyBody,
        parse: "json",
        response: { 200: MfaEnrollResponse, 400: ErrorResponse, 401: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse },
        detail: { summary: "Start a TOTP second factor: its secret and otpauth:// URL; not asked at login until confirmed", tags: ["accounts"], security: bearer },
      },
    )
    .post(
      "/confirm",
      async ({ body, request, route, customer }) => {
        const { account_id, tenant_id } = customer;
        await limitCredentialAttempt(deps, request, mfaSubject(account_id), route);
        const recovery_codes = await confirmMfa(deps, account_id, body.code, deps.now(), requestId(request));
        securityEvent(deps, request, "auth.mfa_enabled", { tenant_id, account_id });
        return { ok: true as const, recovery_codes };
      },
      {
        body: MfaConfirmBody,
        parse: "json",
        response: { 200: MfaConfirmResponse, 400: ErrorResponse, 401: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse },
        detail: { summary: "Turn the enrolled factor on with a code from the app; returns ten recovery codes, shown once", tags: ["accounts"], security: bearer },
      },
    )
    .post(
      "/disable",
      async ({ body, request, route, customer }) => {
        const { account_id, tenant_id } = customer;
        await checkPasswordForMfa(request, route, account_id, body.password, "disable");
        await disableMfa(deps, account_id, body.code, deps.now(), requestId(request));
        securityEvent(deps, request, "auth.mfa_disabled", { tenant_id, account_id });
        return { ok: true as const };
      },
      {
        body: MfaDisableBody,
        parse: "json",
        response: { 200: Accepted, 400: ErrorResponse, 401: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: { summary: "Turn the second factor off: the password and a code (TOTP or recovery)", tags: ["accounts"], security: bearer },
      },
    )
    .post(
      "/recovery-codes",
      async ({ body, request, route, customer }) => {
        const { account_id, tenant_id } = customer;
        await checkPasswordForMfa(request, route, account_id, body.password, "recovery_codes");
        const recovery_codes = await replaceRecoveryCodes(deps, account_id, body.code, deps.now());
        securityEvent(deps, request, "auth.mfa_recovery_codes_replaced", { tenant_id, account_id });
        return { ok: true as const, recovery_codes };
      },
      {
        body: MfaDisableBody,
        parse: "json",
        response: { 200: MfaConfirmResponse, 400: ErrorResponse, 401: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: {
          summary: "Ten new recovery codes for the active second factor (the password and a code); every earlier one stops working; shown once",
          tags: ["accounts"],
          security: bearer,
        },
      },
    );
}
