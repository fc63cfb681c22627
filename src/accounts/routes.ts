// /auth: signup and login (spec sections 3 to 5).
import { Elysia } from "elysia";
import type { Deps } from "../http/deps.ts";
import { AppError } from "../http/errors.ts";
import { newId } from "../ids.ts";
import { hashSecret, newSecret, secretHint } from "../keys/secret.ts";
import { acceptSignupEmail, normaliseEmail } from "./email.ts";
import { ErrorResponse, LoginBody, LoginResponse, SignupBody, SignupResponse } from "./model.ts";
import { assertAcceptablePassword, hashPassword, verifyPassword } from "./passwords.ts";

export function accountsRoutes(deps: Deps) {
  return new Elysia({ name: "accounts", prefix: "/auth" })
    .post(
      "/signup",
      async ({ body, set }) => {
        const email = acceptSignupEmail(body.email);
        assertAcceptablePassword(body.password);
        // Hash before the insert, so a taken email costs the same time as a new one.
        const passwordHash = await hashPassword(body.password, deps.config.bcryptCost);
        const tenantId = newId("cust_");
        const secret = newSecret();
        await deps.db.query("accounts/signup", [tenantId, email, passwordHash, newId("key_"), await hashSecret(secret), secretHint(secret)]);
        const { token } = await deps.sessions.issue(tenantId, 0, deps.now());
        set.status = 201;
        return { ok: true as const, token, tenant_id: tenantId, api_key: secret, email_verified: false };
      },
      {
        body: SignupBody,
        parse: "json",
        response: { 201: SignupResponse, 400: ErrorResponse, 409: ErrorResponse },
        detail: { summary: "Create an account, its first API key and a session", tags: ["accounts"] },
      },
    )
    .post(
      "/login",
      async ({ body }) => {
        const row = await deps.db.one<{ tenant_id: string; password_hash: string; session_epoch: number }>("accounts/find_for_login", [normaliseEmail(body.email)]);
        // An unknown email still pays for one bcrypt verification, so timing does not tell
        // whether an account exists.
        const matches = await verifyPassword(body.password, row?.password_hash ?? deps.dummyPasswordHash);
        if (!row || !matches) throw new AppError("unauthorized", "Wrong email or password.");
        const { token, expires_at } = await deps.sessions.issue(row.tenant_id, row.session_epoch, deps.now());
        return { ok: true as const, token, tenant_id: row.tenant_id, expires_at };
      },
      {
        body: LoginBody,
        parse: "json",
        response: { 200: LoginResponse, 401: ErrorResponse },
        detail: { summary: "Log in: a JWT valid 24 hours", tags: ["accounts"] },
      },
    );
}
