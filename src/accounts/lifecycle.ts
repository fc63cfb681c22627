// The account lifecycle as plain functions over the database: verification, reset, change.
// The rules themselves (single use, expiry, superseding, session ends) are PL/pgSQL functions
// of sql/schema; these wrappers name them and type their rows.
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db, Queryable } from "../db/index.ts";
import { newToken, type TokenOutcome, type TokenPurpose } from "./tokens.ts";

const iso = (now: Date) => now.toISOString();

/** A new token: the database keeps its hash, and the outbox the token sealed for its mail (src/mail/worker.ts opens it). */
async function tokenFor(tokens: SecretBox, kind: TokenPurpose): Promise<[token: string, sealed: string]> {
  const token = newToken();
  return [token, await tokens.seal(token, kind)];
}

/** A fresh verification token and its email, in the caller's transaction; null when already verified. */
export async function issueVerification(q: Queryable, tokens: SecretBox, tenantId: string, now: Date): Promise<number | null> {
  const row = await q.one("accounts/verification_issue", [tenantId, ...(await tokenFor(tokens, "verify_email")), iso(now)]);
  return row?.mail_id ?? null;
}

/** Marks the email verified; throws invalid_token / token_expired / token_used (WA001-3). */
export async function confirmVerification(db: Db, token: string, now: Date): Promise<{ tenant_id: string; verified_at: string }> {
  const row = await db.one("accounts/verification_confirm", [token, iso(now)]);
  return row!;
}

export async function verificationStatus(db: Db, tenantId: string) {
  return db.one("accounts/verification_status", [tenantId]);
}

/**
 * A reset token and email for a registered address, nothing for another. Both paths make a
 * token and run the same single statement, so they take about the same time.
 */
export async function requestReset(db: Db, tokens: SecretBox, email: string, now: Date): Promise<{ tenant_id: string; mail_id: number } | undefined> {
  return db.one("accounts/reset_request", [email, ...(await tokenFor(tokens, "reset_password")), iso(now)]);
}

export async function checkToken(db: Db, token: string, purpose: TokenPurpose, now: Date): Promise<TokenOutcome> {
  const row = await db.one("accounts/token_check", [token, purpose, iso(now)]);
  // auth_token_check() answers only these.
  return row!.outcome as TokenOutcome;
}

/** Sets the password from a reset token and ends every session; throws WA001-3 on a bad token. */
export async function confirmReset(db: Db, token: string, passwordHash: string, now: Date): Promise<{ tenant_id: string; session_epoch: number }> {
  const row = await db.one("accounts/reset_confirm", [token, passwordHash, iso(now)]);
  return row!;
}

export async function credentials(db: Db, tenantId: string) {
  return db.one("accounts/credentials", [tenantId]);
}

/** Replaces the hash if it is still `currentHash` (else WA004) and ends every session: the new epoch. */
export async function changePassword(db: Db, tenantId: string, currentHash: string, newHash: string, now: Date): Promise<number> {
  const row = await db.one("accounts/password_change", [tenantId, currentHash, newHash, iso(now)]);
  return row!.session_epoch;
}

export async function account(db: Db, tenantId: string) {
  return db.one("accounts/account", [tenantId]);
}
