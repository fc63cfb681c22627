// /customer/account: the account as the customer sees it, password change and the second
// factor (JWT). The password and second-factor routes count against the per-address limit.
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
import { securityEvent } from "./events.ts";
import { account, changePassword, credentials, openSession } from "./lifecycle.ts";
import { AccountResponse, PasswordChangeBody, PasswordChangeResponse } from "./model.ts";
import { mfaAccountRoutes } from "./mfa-routes.ts";
import type { Role } from "./roles.ts";
import { addressLimit, limitCredentialAttempt, hashRequester } from "./rate-limit.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface AccountsCustomerDeps {
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

export function customerAccountRoutes(deps: AccountsCustomerDeps) {
  return new Elysia({ name: "accounts-customer-all", prefix: "/customer/account" }).use(accountRoutes(deps)).use(mfaAccountRoutes(deps));
}

function accountRoutes(deps: AccountsCustomerDeps) {
  return new Elysia({ name: "accounts-customer" })
    // The guard runs before Elysia validates the body: without a session the answer is 401, never 400 (src/http/guards.ts).
    .use(sessionGuard(deps.sessions))
    .guard({ session: true })
    .get(
      "",
      async ({ request, customer }) => {
        const { tenant_id, member_id } = customer;
        const row = (await account(deps.db, tenant_id, member_id))!;
        return { ok: true as const, ...row, role: row.role as Role };
      },
      {
        response: { 200: AccountResponse, 401: ErrorResponse },
        detail: { summary: "The account: email, verification, plan", tags: ["accounts"], security: bearer },
      },
    )
    // Hooks apply to the routes registered after them: the read above is not limited.
    .use(addressLimit(deps))
    .post(
      "/password",
      async ({ body, request, route, customer }) => {
        const { tenant_id, account_id } = customer;
        const current = (await credentials(deps.db, account_id))!;
        // Guessing the current password with a stolen session is limited per account and
        // address, apart from login: a session thief cannot lock the owner out of logging in.
        await limitCredentialAttempt(deps, request, `password:${account_id}`, route);
        if (!(await deps.passwords.verify(body.current_password, current.password_hash, hashRequester(request)))) {
          securityEvent(deps, request, "auth.password_change_failed", { tenant_id, reason: "wrong_password" });
          throw new AppError("unauthorized", "The current password is not correct.");
        }
        await deps.passwordRules.assertAcceptable(body.new_password);
        const newHash = await deps.passwords.hash(body.new_password, hashRequester(request));
        // Every session ends, this one too; the caller gets a fresh one (docs/api.md: more than {ok}).
        const epoch = await changePassword(deps.db, account_id, current.password_hash, newHash, deps.now());
        securityEvent(deps, request, "auth.password_changed", { tenant_id, account_id });
        const { token, expires_at } = await openSession(deps, account_id, epoch, tenant_id);
        return { ok: true as const, token, expires_at };
      },
      {
        body: PasswordChangeBody,
        parse: "json",
        response: { 200: PasswordChangeResponse, 400: ErrorResponse, 401: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: { summary: "Change the password; every other session ends and a fresh token is returned", tags: ["accounts"], security: bearer },
      },
    );
}
