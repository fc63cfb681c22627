// /customer/account: the account as the customer sees it, and password change (JWT).
import { Elysia } from "elysia";
import type { Deps } from "../app/deps.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { securityEvent } from "./events.ts";
import { account, changePassword, credentials } from "./lifecycle.ts";
import { AccountResponse, PasswordChangeBody, PasswordChangeResponse, RateLimitedResponse } from "./model.ts";
import { assertAcceptablePassword, hashPassword, verifyPassword } from "./passwords.ts";
import { limitLoginEmail } from "./rate-limit.ts";

const bearer = [{ bearer: [] as string[] }] as Record<string, string[]>[];

export function customerAccountRoutes(deps: Deps) {
  return new Elysia({ name: "accounts-customer", prefix: "/customer/account" })
    .get(
      "",
      async ({ request }) => {
        const { tenant_id } = await deps.sessions.require(request);
        const row = (await account(deps.db, tenant_id))!;
        return { ok: true as const, ...row };
      },
      {
        response: { 200: AccountResponse, 401: ErrorResponse },
        detail: { summary: "The account: email, verification, plan", tags: ["accounts"], security: bearer },
      },
    )
    .post(
      "/password",
      async ({ body, request, route }) => {
        const { tenant_id } = await deps.sessions.require(request);
        const current = (await credentials(deps.db, tenant_id))!;
        // Guessing the current password with a stolen session counts like guessing at login.
        await limitLoginEmail(deps, request, current.email, route);
        if (!(await verifyPassword(body.current_password, current.password_hash))) {
          securityEvent(deps, request, "auth.password_change_failed", { tenant_id, reason: "wrong_password" });
          throw new AppError("unauthorized", "The current password is not correct.");
        }
        assertAcceptablePassword(body.new_password);
        const newHash = await hashPassword(body.new_password, deps.config.bcryptCost);
        // Every session ends, this one too; the caller gets a fresh one (an addition to the contract's {ok}).
        const epoch = await changePassword(deps.db, tenant_id, current.password_hash, newHash, deps.now());
        securityEvent(deps, request, "auth.password_changed", { tenant_id });
        const { token, expires_at } = await deps.sessions.issue(tenant_id, epoch, deps.now());
        return { ok: true as const, token, expires_at };
      },
      {
        body: PasswordChangeBody,
        parse: "json",
        response: { 200: PasswordChangeResponse, 400: ErrorResponse, 401: ErrorResponse, 429: RateLimitedResponse },
        detail: { summary: "Change the password; every other session ends and a fresh token is returned", tags: ["accounts"], security: bearer },
      },
    );
}
