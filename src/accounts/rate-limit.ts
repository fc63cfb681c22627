// Brute-force limits on /auth (issue 3, docs/security.md): fixed windows counted in the
// database (rate_limit_hit() in sql/schema), so every instance shares them. Per client
// address (an IPv6 client by its /64) and route for every /auth route; per email for login and
// for mail-sending requests. Windows expire: an owner is never locked out for longer than one.
import { Elysia } from "elysia";
import type { RateRule } from "../config.ts";
import { addressBucket } from "../http/client-address.ts";
import type { Deps } from "../app/deps.ts";
import { AppError } from "../http/errors.ts";
import { requestState } from "../http/request-state.ts";
import { hashSecret } from "../keys/secret.ts";
import { securityEvent } from "./events.ts";

async function hit(deps: Deps, request: Request, bucket: string, rule: RateRule, scope: string, route: string): Promise<void> {
  const row = await deps.db.one("accounts/rate_limit_hit", [bucket, rule.limit, rule.windowSeconds, deps.now().toISOString()]);
  if (!row || row.allowed) return;
  securityEvent(deps, request, "auth.rate_limited", { scope, route, retry_after: row.retry_after });
  throw new AppError("rate_limited", "Too many attempts. Wait and try again.", {
    fields: { retry_after: row.retry_after },
    headers: { "retry-after": String(row.retry_after) },
  });
}

/**
 * Counts every request of the routes registered after it, per client address and route
 * pattern. The pattern, not the raw path, so `/auth/login/` counts as `/auth/login`. It runs
 * before body validation, so malformed attempts count too.
 */
export function addressLimit(deps: Deps) {
  return new Elysia().onTransform({ as: "scoped" }, async ({ request, route }) => {
    const address = addressBucket(requestState(request).ip);
    await hit(deps, request, `ip:${address}:${route}`, deps.config.rateLimits.authAddress, "address", route);
  });
}

/** Login attempts (and password-change attempts) per email. */
export async function limitLoginEmail(deps: Deps, request: Request, email: string, route: string): Promise<void> {
  // Hashed so the table never holds addresses, registered or not.
  await hit(deps, request, `email:${await hashSecret(email)}:login`, deps.config.rateLimits.loginEmail, "email", route);
}

/** Mail-sending requests (reset, verification) per recipient: no mail bombing through us. */
export async function limitMailTo(deps: Deps, request: Request, recipient: { email: string } | { tenantId: string }, route: string): Promise<void> {
  const key = "email" in recipient ? `email:${await hashSecret(recipient.email)}` : `tenant:${recipient.tenantId}`;
  await hit(deps, request, `${key}:mail`, deps.config.rateLimits.mailEmail, "email", route);
}
