// /auth/verify-email: request a new link (JWT), confirm a token, read the state (JWT).
import { Elysia } from "elysia";
import type { Config } from "../config.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import type { Mailer } from "../mail/worker.ts";
import type { Sessions } from "./sessions.ts";
import { sessionGuard } from "../http/guards.ts";
import { ErrorResponse, toAppError } from "../http/errors.ts";
import { securityEvent } from "./events.ts";
import { confirmVerification, issueVerification, verificationStatus } from "./lifecycle.ts";
import { Accepted, EmptyBody, TokenBody, VerifyConfirmResponse, VerifyStatusResponse } from "./model.ts";
import { addressLimit, limitMailTo } from "./rate-limit.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface AccountsVerifyDeps {
  config: Config;
  db: Db;
  log: Logger;
  mail: Mailer;
  mailTokens: SecretBox;
  now: () => Date;
  sessions: Sessions;
}

const bearer = [{ bearer: [] as string[] }] as Record<string, string[]>[];

export function verifyEmailRoutes(deps: AccountsVerifyDeps) {
  return new Elysia({ name: "accounts-verify-email-all" }).use(verifyEmailConfirmRoutes(deps)).use(verifyEmailSessionRoutes(deps));
}

function verifyEmailConfirmRoutes(deps: AccountsVerifyDeps) {
  return new Elysia({ name: "accounts-verify-email", prefix: "/auth/verify-email" })
    .use(addressLimit(deps))
    .post(
      "/confirm",
      async ({ body, request }) => {
        try {
          const { account_id } = await confirmVerification(deps.db, body.token, deps.now());
          securityEvent(deps, request, "auth.email_verified", { account_id });
        } catch (err) {
          securityEvent(deps, request, "auth.verification_failed", { reason: toAppError(err).error.code });
          throw err;
        }
        return { ok: true as const, email_verified: true as const };
      },
      {
        body: TokenBody,
        parse: "json",
        response: { 200: VerifyConfirmResponse, 400: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
        detail: { summary: "Confirm the email address with the token from the link", tags: ["accounts"], security: [] },
      },
    );
}

// Its own instance: the guard covers the routes of its instance, and confirming
// takes no session (the link is opened wherever the email is read).
function verifyEmailSessionRoutes(deps: AccountsVerifyDeps) {
  return new Elysia({ name: "accounts-verify-email-session", prefix: "/auth/verify-email" })
    .use(addressLimit(deps))
    // The guard runs before Elysia validates the body: without a session the answer is 401, never 400 (src/http/guards.ts).
    .use(sessionGuard(deps.sessions))
    .guard({ session: true })
    .post(
      "/request",
      async ({ request, route, set, customer }) => {
        const { tenant_id, account_id } = customer;
        await limitMailTo(deps, request, { tenantId: account_id }, route);
        // Already verified: nothing to send, and the answer is the same.
        const mailId = await deps.db.tx((q) => issueVerification(q, deps.mailTokens, account_id, deps.now()));
        if (mailId !== null) deps.mail.nudge();
        securityEvent(deps, request, "auth.verification_requested", { tenant_id, sent: mailId !== null });
        set.status = 202;
        return { ok: true as const };
      },
      {
        body: EmptyBody,
        parse: "json",
        response: { 202: Accepted, 400: ErrorResponse, 401: ErrorResponse, 429: ErrorResponse },
        detail: { summary: "Send a new verification email; earlier links stop working", tags: ["accounts"], security: bearer },
      },
    )
    .get(
      "/status",
      async ({ customer }) => {
        const { account_id } = customer;
        const row = (await verificationStatus(deps.db, account_id))!;
        return { ok: true as const, email: row.email, email_verified: row.email_verified, verified_at: row.verified_at };
      },
      {
        response: { 200: VerifyStatusResponse, 401: ErrorResponse, 429: ErrorResponse },
        detail: { summary: "Whether the account's email is verified", tags: ["accounts"], security: bearer },
      },
    );
}
