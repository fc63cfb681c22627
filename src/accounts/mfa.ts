// The second factor over the database: the state machine itself (pending -> active -> disabled,
// each TOTP step and recovery code accepted once) is PL/pgSQL in sql/schema/03_accounts.sql.
import type { EventName } from "../audit/events.ts";
import type { AuditTrail, RecordEvents } from "../audit/trail.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Queryable } from "../db/index.ts";
import type { Logger } from "../log.ts";
import { AppError } from "../http/errors.ts";
import { isTotpCode, newRecoveryCodes, newTotpSecret, recoveryCodeHash, totpStep } from "./totp.ts";

/** What the second factor needs: the database, the box its secrets are sealed in, the audit trail and the log. */
export interface MfaDeps {
  db: Queryable;
  totpSecrets: SecretBox;
  audit: AuditTrail;
  log: Logger;
}

const iso = (now: Date) => now.toISOString();
const wrongCode = () => new AppError("invalid_code", "The code is wrong, expired or already used.");

/** A new pending factor (the secret sealed); 409 mfa_enabled while one is active. */
export async function enrollMfa(deps: MfaDeps, accountId: string, email: string, now: Date) {
  const fresh = newTotpSecret(email);
  await deps.db.query("accounts/mfa_enroll", [accountId, await deps.totpSecrets.seal(fresh.secret, accountId), iso(now)]);
  return fresh;
}

/** The factor and its secret; undefined also when the secret does not open (sealed under a JWT_SECRET since replaced): no code matches then, a recovery code still does. */
async function secretOf(deps: MfaDeps, accountId: string, q: Queryable = deps.db): Promise<{ status: string; secret: string } | undefined> {
  const row = await q.one("accounts/mfa_secret", [accountId]);
  if (!row) return undefined;
  try {
    return { status: row.status, secret: await deps.totpSecrets.open(row.secret_sealed, accountId) };
  } catch {
    deps.log.error("totp_secret_unreadable", { account_id: accountId, reason: "sealed under another service secret" });
    return undefined;
  }
}

/** Activates a pending factor with a code from the app; its ten recovery codes, shown once. */
export async function confirmMfa(deps: MfaDeps, accountId: string, code: string, now: Date, requestId: string): Promise<string[]> {
  const factor = await secretOf(deps, accountId);
  if (!factor || factor.status !== "pending") throw new AppError("not_pending", "There is no enrolment to confirm; enroll first.");
  const step = await totpStep(factor.secret, code, now);
  if (step === null) throw wrongCode();
  const codes = newRecoveryCodes();
  const hashes = await Promise.all(codes.map(recoveryCodeHash));
  await deps.audit.tx(async (q, record) => {
    await q.query("accounts/mfa_confirm", [accountId, step, hashes, iso(now)]);
    await recordForPerson(q, record, accountId, "mfa.enabled", requestId);
  });
  return codes;
}

/**
 * An event of the person (their second factor) in the log of every tenant they are an active
 * member of, each naming their member there as actor and target: each tenant's members see it.
 */
async function recordForPerson(q: Queryable, record: RecordEvents, accountId: string, event: EventName, requestId: string): Promise<void> {
  const memberships = await q.query("accounts/tenants", [accountId]);
  await record(...memberships.map((m) => ({ tenantId: m.tenant_id, actor: { member_id: m.member_id }, requestId, event, target: { member_id: m.member_id } })));
}

/** Spends a TOTP code (once per step) or an unused recovery code of the active factor, else 401 invalid_code. */
export async function spendMfaCode(deps: MfaDeps, accountId: string, code: string, now: Date, q: Queryable = deps.db): Promise<void> {
  if (isTotpCode(code)) {
    const factor = await secretOf(deps, accountId, q);
    const step = factor?.status === "active" ? await totpStep(factor.secret, code, now) : null;
    if (step === null) throw wrongCode();
    await q.query("accounts/mfa_accept_code", [accountId, step, null, iso(now)]);
  } else {
    await q.query("accounts/mfa_accept_code", [accountId, null, await recoveryCodeHash(code), iso(now)]);
  }
}

/** Turns the active factor off once a code is spent; 401 invalid_code when none is active. */
export async function disableMfa(deps: MfaDeps, accountId: string, code: string, now: Date, requestId: string): Promise<void> {
  await deps.audit.tx(async (q, record) => {
    await spendMfaCode(deps, accountId, code, now, q);
    await q.query("accounts/mfa_disable", [accountId, iso(now)]);
    await recordForPerson(q, record, accountId, "mfa.disabled", requestId);
  });
}

/** Ten new recovery codes for the active factor once a code is spent; every earlier one stops working. Shown once. */
export async function replaceRecoveryCodes(deps: MfaDeps, accountId: string, code: string, now: Date): Promise<string[]> {
  await spendMfaCode(deps, accountId, code, now);
  const codes = newRecoveryCodes();
  await deps.db.query("accounts/mfa_recovery_replace", [accountId, await Promise.all(codes.map(recoveryCodeHash))]);
  return codes;
}

/**
 * Re-seals, under the current service secret, every TOTP secret still sealed under
 * JWT_SECRET_PREVIOUS, so that the previous secret can be dropped without voiding a factor. Run at
 * start while JWT_SECRET_PREVIOUS is set; another instance doing the same at once is harmless.
 */
export async function resealTotpSecrets(db: Queryable, box: SecretBox): Promise<{ resealed: number; unreadable: number }> {
  const PAGE = 500;
  let after = "";
  let resealed = 0;
  let unreadable = 0;
  for (;;) {
    const rows = await db.query("accounts/mfa_sealed_page", [after, PAGE]);
    for (const row of rows) {
      const opened = await box.unseal(row.secret_sealed, row.account_id);
      if (opened === null) unreadable++;
      if (opened?.under !== "previous") continue;
      const fresh = await box.seal(opened.secret, row.account_id);
      resealed += (await db.query("accounts/mfa_reseal", [row.account_id, row.secret_sealed, fresh])).length;
    }
    if (rows.length < PAGE) return { resealed, unreadable };
    after = rows[rows.length - 1]!.account_id;
  }
}
