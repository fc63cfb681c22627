// Brute-force limits on the password routes (docs/security.md): fixed windows counted in the
// database (rate_limit_hit() in sql/schema), so every instance shares them.
// - Per client address (an IPv6 client by its /64, and its /48 beside it) and route.
// - Per (email, address) for login: a stranger's guesses fill only their own counter.
// - Per email from anywhere: a much higher ceiling that slows attempts down, never refuses them,
//   so no one can lock an owner out. A successful login or a completed reset clears both.
import { Elysia } from "elysia";
import type { Config, RateRule } from "../config.ts";
import { addressBucket, networkBucket } from "../http/client-address.ts";
import type { Queryable } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { requestState } from "../http/request-state.ts";
import { hashSecret } from "../keys/secret.ts";
import { securityEvent } from "./events.ts";
import type { Logger } from "../log.ts";

/** What the limits read: the shared counters, the clock, the limits, and the log for refusals. */
export interface Limits {
  db: Queryable;
  log: Logger;
  now: () => Date;
  config: Pick<Config, "rateLimits" | "loginSlowdownMs">;
}

interface Count {
  allowed: boolean;
  retryAfter: number;
}

async function count(deps: Limits, bucket: string, rule: RateRule): Promise<Count> {
  const row = (await deps.db.one("accounts/rate_limit_hit", [bucket, rule.limit, rule.windowSeconds, deps.now().toISOString()]))!;
  return { allowed: row.allowed, retryAfter: row.retry_after };
}

async function hit(deps: Limits, request: Request, bucket: string, rule: RateRule, scope: string, route: string): Promise<void> {
  const { allowed, retryAfter } = await count(deps, bucket, rule);
  if (allowed) return;
  securityEvent(deps, request, "auth.rate_limited", { scope, route, retry_after: retryAfter });
  throw new AppError("rate_limited", "Too many attempts. Wait and try again.", {
    fields: { retry_after: retryAfter },
    headers: { "retry-after": String(retryAfter) },
  });
}

/**
 * Counts every request of the routes registered after it, per client address and route
 * pattern. The pattern, not the raw path, so `/auth/login/` counts as `/auth/login`. It runs
 * before body validation, so malformed attempts count too.
 */
export function addressLimit(deps: Limits) {
  return new Elysia().onTransform({ as: "scoped" }, async ({ request, route }) => {
    const ip = requestState(request).ip;
    await hit(deps, request, `ip:${addressBucket(ip)}:${route}`, deps.config.rateLimits.authAddress, "address", route);
    const network = networkBucket(ip);
    if (network) await hit(deps, request, `ip:${network}:${route}`, deps.config.rateLimits.authNetwork, "network", route);
  });
}

/** Who a password hash is for, for its fair share of the hashing: the client's address (an IPv6 /64). */
export function hashRequester(request: Request): string {
  return addressBucket(requestState(request).ip);
}

/** The counters' key of a login subject; hashed so the table never holds an address, registered or not. */
export async function loginSubject(email: string): Promise<string> {
  return `login:${await hashSecret(email)}`;
}

/**
 * One attempt at a subject's credentials (a login's email, a session's account): refused past
 * the per-(subject, address) limit; past the subject's ceiling from anywhere, answered late.
 */
export async function limitCredentialAttempt(deps: Limits, request: Request, subject: string, route: string): Promise<void> {
  const limits = deps.config.rateLimits;
  await hit(deps, request, `${subject}:${addressBucket(requestState(request).ip)}`, limits.loginPair, "email_address", route);
  const { allowed } = await count(deps, subject, limits.loginEmail);
  if (allowed) return;
  securityEvent(deps, request, "auth.login_slowed", { route, delay_ms: deps.config.loginSlowdownMs });
  await new Promise((resolve) => setTimeout(resolve, deps.config.loginSlowdownMs));
}

/** Forgets a subject's counts: its owner proved who they are. */
export async function clearCredentialAttempts(deps: Limits, subject: string): Promise<void> {
  await deps.db.query("accounts/rate_limit_clear", [subject]);
}

/** Mail-sending requests (reset, verification) per recipient: no mail bombing through us. */
export async function limitMailTo(deps: Limits, request: Request, recipient: { email: string } | { tenantId: string }, route: string): Promise<void> {
  const key = "email" in recipient ? `email:${await hashSecret(recipient.email)}` : `tenant:${recipient.tenantId}`;
  await hit(deps, request, `${key}:mail`, deps.config.rateLimits.mailEmail, "email", route);
}
