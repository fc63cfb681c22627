// Typed wrappers of the outbox's queries (sql/queries/outbox/, functions in sql/schema/02_outbox.sql):
// one table of deliveries to make, for every channel (mail, webhooks).
import type { Db, Queryable, QueryRow } from "../db/index.ts";

/** Whose worker delivers a row (the outbox table's CHECK lists the same). */
export type Channel = "mail" | "webhook";

/** How one channel's deliveries are claimed and retried. */
export interface ChannelPolicy {
  channel: Channel;
  /** A failed attempt is retried after base * 2^(attempt - 1) seconds, capped; the row fails after maxAttempts. */
  retry: { maxAttempts: number; baseSeconds: number; capSeconds: number };
  /** A claimed row is left alone by other instances this long; a delivery times out well before. */
  leaseSeconds: number;
  /** Rows claimed at once. */
  batch: number;
  /** The name of a row's id in the worker's log lines; `<channel>_id` when not given. */
  logIdField?: string;
}

/** Seconds from failed attempt number `attempt` (1 for the first) to the next, as outbox_attempt_failed() waits them. */
export function retryDelaySeconds(retry: ChannelPolicy["retry"], attempt: number): number {
  return Math.min(retry.capSeconds, retry.baseSeconds * 2 ** Math.max(attempt - 1, 0));
}

/** The waits between a row's attempts, first to last, when every attempt fails: maxAttempts - 1 of them. */
export function retrySchedule(retry: ChannelPolicy["retry"]): number[] {
  return Array.from({ length: retry.maxAttempts - 1 }, (_, i) => retryDelaySeconds(retry, i + 1));
}

/** A row due for delivery; data is the object enqueue() stored. */
export type Delivery = QueryRow<"outbox/claim"> & { data: Record<string, unknown> };

/** Queues a delivery in the caller's transaction; nudge the channel's worker after the commit. */
export async function enqueue(q: Queryable, channel: Channel, kind: string, recipient: string, tenantId: string | null, data: Record<string, unknown>): Promise<number> {
  const row = await q.one("outbox/enqueue", [channel, kind, recipient, tenantId, data]);
  return row!.id;
}

/** Claims (leases) up to `limit` due rows of the channel. */
export function claimDue(db: Db, policy: ChannelPolicy, limit = policy.batch): Promise<Delivery[]> {
  return db.query("outbox/claim", [policy.channel, limit, policy.leaseSeconds]) as Promise<Delivery[]>;
}

export async function markSent(db: Db, id: number): Promise<void> {
  await db.query("outbox/sent", [id]);
}

/** Records a failed attempt under the channel's retry policy; returns the row's new status ('pending' while it will be retried). */
export async function markFailedAttempt(db: Db, policy: ChannelPolicy, id: number, error: string, permanent: boolean): Promise<string | null> {
  const { maxAttempts, baseSeconds, capSeconds } = policy.retry;
  const row = await db.one("outbox/attempt_failed", [id, error, permanent, maxAttempts, baseSeconds, capSeconds]);
  return row?.status ?? null;
}

/** The channel's deliveries not yet made: its backlog. */
export async function pendingCount(db: Db, channel: Channel): Promise<number> {
  const row = await db.one("outbox/pending_count", [channel]);
  return row?.pending ?? 0;
}
