// The account lifecycle as plain functions over the database: verification, reset, change.
// The rules themselves (single use, expiry, superseding, session ends) are PL/pgSQL functions
// of sql/schema; these wrappers name them and type their rows.
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db, Queryable } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import type { Role } from "./roles.ts";
import type { Sessions } from "./sessions.ts";
import { newToken, type TokenOutcome, type TokenPurpose } from "./tokens.ts";

const iso = (now: Date) => now.toISOString();

/** A new token: the database keeps its hash, and the outbox the token sealed for its mail (src/mail/worker.ts opens it). */
async function tokenFor(tokens: SecretBox, kind: TokenPurpose): Promise<[token: string, sealed: string]> {
  const token = newToken();
  return [token, await tokens.seal(token, kind)];
}

/** A fresh verification token and its email, in the caller's transaction; null when already verified. */
export async function issueVerification(q: Queryable, tokens: SecretBox, accountId: string, now: Date): Promise<number | null> {
  const row = await q.one("accounts/verification_issue", [accountId, ...(await tokenFor(tokens, "verify_email")), iso(now)]);
  return row?.mail_id ?? null;
}

/** Marks the email verified; throws invalid_token / token_expired / token_used (WA001-3). */
export async function confirmVerification(db: Db, token: string, now: Date): Promise<{ account_id: string; verified_at: string }> {
  const row = await db.one("accounts/verification_confirm", [token, iso(now)]);
  return row!;
}

export async function verificationStatus(db: Db, accountId: string) {
  return db.one("accounts/verification_status", [accountId]);
}

/**
 * A reset token and email for a registered address, nothing for another. Both paths make a
 * token and run the same single statement, so they take about the same time.
 */
export async function requestReset(db: Db, tokens: SecretBox, email: string, now: Date): Promise<{ account_id: string; tenant_id: string | null; mail_id: number } | undefined> {
  return db.one("accounts/reset_request", [email, ...(await tokenFor(tokens, "reset_password")), iso(now)]);
}

export async function checkToken(db: Db, token: string, purpose: TokenPurpose, now: Date): Promise<TokenOutcome> {
  const row = await db.one("accounts/token_check", [token, purpose, iso(now)]);
  // auth_token_check() answers only these.
  return row!.outcome as TokenOutcome;
}

/** Sets the password from a reset token and ends every session; throws WA001-3 on a bad token. */
export async function confirmReset(db: Db, token: string, passwordHash: string, now: Date): Promise<{ account_id: string; session_epoch: number }> {
  const row = await db.one("accounts/reset_confirm", [token, passwordHash, iso(now)]);
  return row!;
}

export async function credentials(db: Db, accountId: string) {
  return db.one("accounts/credentials", [accountId]);
}

/** Replaces the hash if it is still `currentHash` (else WA004) and ends every session: the new epoch. */
export async function changePassword(db: Db, accountId: string, currentHash: string, newHash: string, now: Date): Promise<number> {
  const row = await db.one("accounts/password_change", [accountId, currentHash, newHash, iso(now)]);
  return row!.session_epoch;
}

export async function account(db: Db, tenantId: string, memberId: string) {
  return db.one("accounts/account", [tenantId, memberId]);
}

/**
 * A session for a person whose credentials passed: of `tenantId` when named (a switch; 404 when
 * they are no member of it), else of the tenant they used last (or their oldest membership).
 * A person who belongs to no tenant any more gets 401: there is nothing to open a session of.
 */
export async function openSession(
  deps: { db: Db; sessions: Sessions; now: () => Date },
  accountId: string,
  accountEpoch: number,
  tenantId: string | null = null,
): Promise<{ token: string; tenant_id: string; member_id: string; role: Role; expires_at: string }> {
  const member = await deps.db.one("accounts/member_for_session", [accountId, tenantId]);
  if (!member) {
    if (tenantId !== null) throw new AppError("not_found", "You are no member of that tenant.");
    throw new AppError("unauthorized", "This account is no longer a member of any tenant; ask an admin for an invitation.");
  }
  const subject = { account_id: accountId, account_epoch: accountEpoch, tenant_id: member.tenant_id, member_id: member.member_id, member_epoch: member.member_epoch };
  const { token, expires_at } = await deps.sessions.issue(subject, deps.now());
  // role: the members table's CHECK admits only the five roles.
  return { token, tenant_id: member.tenant_id, member_id: member.member_id, role: member.role as Role, expires_at };
}
