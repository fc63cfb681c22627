// The second factor: enrol, confirm, disable (JWT, /customer/account/mfa) and the login's second
// step (/auth/mfa/verify). Every route counts against the per-address limit.
import { Elysia } from "elysia";
import type { Deps } from "../app/deps.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { securityEvent } from "./events.ts";
import { credentials } from "./lifecycle.ts";
import { confirmMfa, disableMfa, enrollMfa, replaceRecoveryCodes, spendMfaCode } from "./mfa.ts";
import { Accepted, EmptyBody, LoginResponse, MfaConfirmBody, MfaConfirmResponse, MfaDisableBody, MfaEnrollResponse, MfaVerifyBody, RateLimitedResponse } from "./model.ts";
import { addressLimit, clearCredentialAttempts, limitCredentialAttempt, loginSubject, hashRequester } from "./rate-limit.ts";

const bearer = [{ bearer: [] as string[] }] as Record<string, string[]>[];
const mfaSubject = (tenantId: string) => `mfa:${tenantId}`;

export function mfaVerifyRoutes(deps: Deps) {
  return new Elysia({ name: "accounts-mfa-verify", prefix: "/auth/mfa" })
    .use(addressLimit(deps))
    .post(
      "/verify",
      async ({ body, request, route }) => {
        const { tenant_id, session_epoch } = await deps.sessions.readMfaChallenge(body.mfa_token, deps.now());
        // Guessing codes counts like guessing passwords: per (account, address), slowed per account.
        await limitCredentialAttempt(deps, request, mfaSubject(tenant_id), route);
        try {
          await spendMfaCode(deps, tenant_id, body.code, deps.now());
        } catch (err) {
          securityEvent(deps, request, "auth.mfa_failed", { tenant_id, step: "login" });
          throw err;
        }
        const { email } = (await credentials(deps.db, tenant_id))!;
        await clearCredentialAttempts(deps, mfaSubject(tenant_id));
        await clearCredentialAttempts(deps, await loginSubject(email));
        const { token, expires_at } = await deps.sessions.issue(tenant_id, session_epoch, deps.now());
        securityEvent(deps, request, "auth.login_succeeded", { tenant_id, mfa: true });
        return { ok: true as const, token, tenant_id, expires_at };
      },
      {
        body: MfaVerifyBody,
        parse: "json",
        response: { 200: LoginResponse, 400: ErrorResponse, 401: ErrorResponse, 429: RateLimitedResponse },
        detail: { summary: "The login's second step: a TOTP code or an unused recovery code for the mfa_token", tags: ["accounts"] },
      },
    );
}

/** Registered after the customer's password route, under the same address limit. */
export function mfaAccountRoutes(deps: Deps) {
  /** Turning the factor off or replacing its recovery codes: counted like a code guess, then the password (401 when wrong). */
  const checkPasswordForMfa = async (request: Request, route: string, tenantId: string, password: string, step: string) => {
    await limitCredentialAttempt(deps, request, mfaSubject(tenantId), route);
    const current = (await credentials(deps.db, tenantId))!;
    if (!(await deps.passwords.verify(password, current.password_hash, hashRequester(request)))) {
      securityEvent(deps, request, "auth.mfa_failed", { tenant_id: tenantId, step, reason: "wrong_password" });
      throw new AppError("unauthorized", "The password is not correct.");
    }
  };
  return new Elysia({ name: "accounts-mfa", prefix: "/mfa" })
    .post(
      "/enroll",
      async ({ request }) => {
        const { tenant_id } = await deps.sessions.require(request);
        const { email } = (await credentials(deps.db, tenant_id))!;
        const { secret, otpauth_url } = await enrollMfa(deps, tenant_id, email, deps.now());
        securityEvent(deps, request, "auth.mfa_enrolled", { tenant_id });
        return { ok: true as const, secret, otpauth_url };
      },
      {
        body: EmptyBody,
        parse: "json",
        response: { 200: MfaEnrollResponse, 400: ErrorResponse, 401: ErrorResponse, 409: ErrorResponse, 429: RateLimitedResponse },
        detail: { summary: "Start a TOTP second factor: its secret and otpauth:// URL; not asked at login until confirmed", tags: ["accounts"], security: bearer },
      },
    )
    .post(
      "/confirm",
      async ({ body, request, route }) => {
        const { tenant_id } = await deps.sessions.require(request);
        await limitCredentialAttempt(deps, request, mfaSubject(tenant_id), route);
        const recovery_codes = await confirmMfa(deps, tenant_id, body.code, deps.now());
        securityEvent(deps, request, "auth.mfa_enabled", { tenant_id });
        return { ok: true as const, recovery_codes };
      },
      {
        body: MfaConfirmBody,
        parse: "json",
        response: { 200: MfaConfirmResponse, 400: ErrorResponse, 401: ErrorResponse, 409: ErrorResponse, 429: RateLimitedResponse },
        detail: { summary: "Turn the enrolled factor on with a code from the app; returns ten recovery codes, shown once", tags: ["accounts"], security: bearer },
      },
    )
    .post(
      "/disable",
      async ({ body, request, route }) => {
        const { tenant_id } = await deps.sessions.require(request);
        await checkPasswordForMfa(request, route, tenant_id, body.password, "disable");
        await disableMfa(deps, tenant_id, body.code, deps.now());
        securityEvent(deps, request, "auth.mfa_disabled", { tenant_id });
        return { ok: true as const };
      },
      {
        body: MfaDisableBody,
        parse: "json",
        response: { 200: Accepted, 400: ErrorResponse, 401: ErrorResponse, 429: RateLimitedResponse, 503: ErrorResponse },
        detail: { summary: "Turn the second factor off: the password and a code (TOTP or recovery)", tags: ["accounts"], security: bearer },
      },
    )
    .post(
      "/recovery-codes",
      async ({ body, request, route }) => {
        const { tenant_id } = await deps.sessions.require(request);
        await checkPasswordForMfa(request, route, tenant_id, body.password, "recovery_codes");
        const recovery_codes = await replaceRecoveryCodes(deps, tenant_id, body.code, deps.now());
        securityEvent(deps, request, "auth.mfa_recovery_codes_replaced", { tenant_id });
        return { ok: true as const, recovery_codes };
      },
      {
        body: MfaDisableBody,
        parse: "json",
        response: { 200: MfaConfirmResponse, 400: ErrorResponse, 401: ErrorResponse, 429: RateLimitedResponse, 503: ErrorResponse },
        detail: {
          summary: "Ten new recovery codes for the active second factor (the password and a code); every earlier one stops working; shown once",
          tags: ["accounts"],
          security: bearer,
        },
      },
    );
}
