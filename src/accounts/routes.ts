// /auth: signup and login (spec sections 3 to 5), and the verification and reset routes.
// Every /auth route counts against the per-address brute-force limit (./rate-limit.ts).
import { Elysia } from "elysia";
import type { Deps } from "../app/deps.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { newId } from "../ids.ts";
import { hashSecret, newSecret, secretHint } from "../keys/secret.ts";
import { acceptSignupEmail, normaliseEmail } from "./email.ts";
import { securityEvent } from "./events.ts";
import { issueVerification } from "./lifecycle.ts";
import { LoginBody, LoginResponse, RateLimitedResponse, SignupBody, SignupResponse } from "./model.ts";
import { assertAcceptablePassword, hashPassword, verifyPassword } from "./passwords.ts";
import { addressLimit, limitLoginEmail } from "./rate-limit.ts";
import { resetPasswordRoutes } from "./reset-routes.ts";
import { verifyEmailRoutes } from "./verify-routes.ts";

export function accountsRoutes(deps: Deps) {
  return new Elysia({ name: "accounts" }).use(signupLoginRoutes(deps)).use(verifyEmailRoutes(deps)).use(resetPasswordRoutes(deps));
}

function signupLoginRoutes(deps: Deps) {
  return new Elysia({ name: "accounts-signup-login", prefix: "/auth" })
    .use(addressLimit(deps))
    .post(
      "/signup",
      async ({ body, set, request }) => {
        const email = await acceptSignupEmail(body.email);
        assertAcceptablePassword(body.password);
        // Hash before the insert, so a taken email costs the same time as a new one.
        const passwordHash = await hashPassword(body.password, deps.config.bcryptCost);
        const tenantId = newId("cust_");
        const secret = newSecret();
        const keyHash = await hashSecret(secret);
        // The verification email is queued in the signup's own transaction: no account without it.
        await deps.db.tx(async (q) => {
          await q.query("accounts/signup", [tenantId, email, passwordHash, newId("key_"), keyHash, secretHint(secret)]);
          await issueVerification(q, tenantId, deps.now());
        });
        deps.mail.nudge();
        securityEvent(deps, request, "auth.signup", { tenant_id: tenantId, email });
        const { token } = await deps.sessions.issue(tenantId, 0, deps.now());
        set.status = 201;
        return { ok: true as const, token, tenant_id: tenantId, api_key: secret, email_verified: false };
      },
      {
        body: SignupBody,
        parse: "json",
        response: { 201: SignupResponse, 400: ErrorResponse, 409: ErrorResponse, 429: RateLimitedResponse },
        detail: { summary: "Create an account, its first API key and a session; sends a verification email", tags: ["accounts"] },
      },
    )
    .post(
      "/login",
      async ({ body, request, route }) => {
        const email = normaliseEmail(body.email);
        await limitLoginEmail(deps, request, email, route);
        const row = await deps.db.one("accounts/find_for_login", [email]);
        // An unknown email still pays for one bcrypt verification, so timing does not tell
        // whether an account exists. Both wait for the dummy hash (made at start-up), so not even
        // the first moments after a start tell them apart.
        const dummy = await deps.dummyPasswordHash;
        const matches = await verifyPassword(body.password, row?.password_hash ?? dummy);
        if (!row || !matches) {
          securityEvent(deps, request, "auth.login_failed", { tenant_id: row?.tenant_id, email, reason: row ? "wrong_password" : "unknown_email" });
          throw new AppError("unauthorized", "Wrong email or password.");
        }
        const { token, expires_at } = await deps.sessions.issue(row.tenant_id, row.session_epoch, deps.now());
        securityEvent(deps, request, "auth.login_succeeded", { tenant_id: row.tenant_id });
        return { ok: true as const, token, tenant_id: row.tenant_id, expires_at };
      },
      {
        body: LoginBody,
        parse: "json",
        response: { 200: LoginResponse, 400: ErrorResponse, 401: ErrorResponse, 429: RateLimitedResponse },
        detail: { summary: "Log in: a JWT valid 24 hours", tags: ["accounts"] },
      },
    );
}
