// /auth/reset-password: request a link (same answer for any address), check a token, set the
// new password with it.
import { Elysia } from "elysia";
import type { PasswordHasher, PasswordRules } from "./passwords.ts";
import type { Config } from "../config.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import type { Mailer } from "../mail/worker.ts";
import { AppError, ErrorResponse, toAppError } from "../http/errors.ts";
import { normaliseEmail } from "./email.ts";
import { securityEvent } from "./events.ts";
import { checkToken, confirmReset, requestReset } from "./lifecycle.ts";
import { Accepted, ResetConfirmBody, ResetRequestBody, ResetValidateResponse, TokenBody } from "./model.ts";
import { credentials } from "./lifecycle.ts";
import { addressLimit, clearCredentialAttempts, limitMailTo, loginSubject, hashRequester } from "./rate-limit.ts";
import { TOKEN_MESSAGES } from "./tokens.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface AccountsResetDeps {
  config: Config;
  db: Db;
  log: Logger;
  mail: Mailer;
  mailTokens: SecretBox;
  now: () => Date;
  passwordRules: PasswordRules;
  passwords: PasswordHasher;
}

export function resetPasswordRoutes(deps: AccountsResetDeps) {
  return new Elysia({ name: "accounts-reset-password", prefix: "/auth/reset-password" })
    .use(addressLimit(deps))
    .post(
      "/request",
      async ({ body, request, route, set }) => {
        // No syntax check either: an invalid address is just one that is not registered.
        const email = normaliseEmail(body.email);
        await limitMailTo(deps, request, { email }, route);
        const queued = await requestReset(deps.db, deps.mailTokens, email, deps.now());
        if (queued) deps.mail.nudge();
        securityEvent(deps, request, "auth.reset_requested", { account_id: queued?.account_id, tenant_id: queued?.tenant_id, email, registered: queued !== undefined });
        set.status = 202;
        return { ok: true as const };
      },
      {
        body: ResetRequestBody,
        parse: "json",
        response: { 202: Accepted, 400: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: { summary: "Email a reset link if the address is registered; the answer is the same either way", tags: ["accounts"], security: [] },
      },
    )
    .post(
      "/validate",
      async ({ body }) => {
        const outcome = await checkToken(deps.db, body.token, "reset_password", deps.now());
        return outcome === "valid" ? { ok: true as const, valid: true } : { ok: true as const, valid: false, reason: outcome };
      },
      {
        body: TokenBody,
        parse: "json",
        response: { 200: ResetValidateResponse, 400: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: { summary: "Whether a reset token can still be used", tags: ["accounts"], security: [] },
      },
    )
    .post(
      "/confirm",
      async ({ body, request }) => {
        try {
          await deps.passwordRules.assertAcceptable(body.password);
          // The token first: a dead one costs no bcrypt. The redemption below decides for good.
          const outcome = await checkToken(deps.db, body.token, "reset_password", deps.now());
          if (outcome !== "valid") throw new AppError(outcome, TOKEN_MESSAGES[outcome]);
          const passwordHash = await deps.passwords.hash(body.password, hashRequester(request));
          const { account_id } = await confirmReset(deps.db, body.token, passwordHash, deps.now());
          // The owner proved the address: the login counts against it start afresh.
          const { email } = (await credentials(deps.db, account_id))!;
          await clearCredentialAttempts(deps, await loginSubject(email));
          securityEvent(deps, request, "auth.reset_completed", { account_id });
        } catch (err) {
          securityEvent(deps, request, "auth.reset_failed", { reason: toAppError(err).error.code });
          throw err;
        }
        return { ok: true as const };
      },
      {
        body: ResetConfirmBody,
        parse: "json",
        response: { 200: Accepted, 400: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: { summary: "Set a new password with a reset token; every earlier session ends", tags: ["accounts"], security: [] },
      },
    );
}
