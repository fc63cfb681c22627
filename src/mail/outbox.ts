// Typed wrappers of the mail outbox queries (sql/queries/mail/, functions in sql/schema).
import type { Db, Queryable, QueryRow } from "../db/index.ts";

/** A message due for sending; data is the object enqueueMail() stored. */
export type ClaimedMail = QueryRow<"mail/claim"> & { data: Record<string, unknown> };

/** Retry policy: base * 2^(attempt - 1) seconds, capped; failed after MAX_ATTEMPTS (about 9 h). */
export const RETRY = { maxAttempts: 10, baseSeconds: 30, capSeconds: 3600 } as const;
/** A claimed row is left alone by other instances this long; sending times out well before. */
export const LEASE_SECONDS = 120;

/** Queues a message in the caller's transaction; nudge the worker after the commit. */
export async function enqueueMail(q: Queryable, kind: string, to: string, tenantId: string | null, data: Record<string, unknown>): Promise<number> {
  const row = await q.one("mail/enqueue", [kind, to, tenantId, data]);
  return row!.id;
}

export function claimDue(db: Db, limit: number): Promise<ClaimedMail[]> {
  return db.query("mail/claim", [limit, LEASE_SECONDS]) as Promise<ClaimedMail[]>;
}

export async function markSent(db: Db, id: number): Promise<void> {
  await db.query("mail/sent", [id]);
}

/** Records a failed attempt; returns the row's new status ('pending' while it will be retried). */
export async function markFailedAttempt(db: Db, id: number, error: string, permanent: boolean): Promise<string | null> {
  const row = await db.one("mail/attempt_failed", [id, error, permanent, RETRY.maxAttempts, RETRY.baseSeconds, RETRY.capSeconds]);
  return row?.status ?? null;
}

/** Messages not yet sent: the outbox backlog (warden_mail_outbox_pending). */
export async function pendingMailCount(db: Db): Promise<number> {
  const row = await db.one("mail/pending_count");
  return row?.pending ?? 0;
}
