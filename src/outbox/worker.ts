// Delivers one channel of the outbox in the background: polls for due rows (and runs at once when
// nudged after an enqueue), hands each to the channel's deliver(), and records the outcome: sent,
// or a failed attempt retried with backoff (at once failed when the failure is permanent). HTTP
// requests only ever write outbox rows, so a slow or dead receiver never slows or fails one.
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import { claimDue, markFailedAttempt, markSent, type ChannelPolicy, type Delivery } from "./queue.ts";

export interface OutboxWorker {
  /** Look for due rows now (call after committing an enqueue). Never waits, never throws. */
  nudge(): void;
  /** Stops polling and waits for the batch in flight. */
  stop(): Promise<void>;
}

export interface Deliverer {
  /** Makes one delivery; throws when it did not happen. */
  deliver(row: Delivery): Promise<void>;
  /** Whether a failure would be the same on every retry (the row then fails at once). */
  permanent(err: unknown): boolean;
}

function describe(err: unknown): string {
  return String((err as Error)?.message ?? err).slice(0, 500);
}

/** Log lines are `<channel>.sent`, `.retry`, `.failed`, `.record_failed` and `.claim_failed`, naming the row as `<channel>_id` (or the policy's logIdField). */
export function startOutboxWorker(opts: { db: Db; log: Logger; policy: ChannelPolicy; pollMs: number } & Deliverer): OutboxWorker {
  const { db, log, policy } = opts;
  const { channel } = policy;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  async function deliver(row: Delivery): Promise<void> {
    const fields = { [policy.logIdField ?? `${channel}_id`]: row.id, kind: row.kind, tenant_id: row.tenant_id, attempts: row.attempts };
    try {
      await opts.deliver(row);
    } catch (err) {
      try {
        const status = await markFailedAttempt(db, policy, row.id, describe(err), opts.permanent(err));
        (status === "failed" ? log.error : log.warn)(`${channel}.${status === "failed" ? "failed" : "retry"}`, { ...fields, error: describe(err) });
      } catch (dbErr) {
        // The lease runs out and another pass retries the row.
        log.warn(`${channel}.record_failed`, { ...fields, error: describe(dbErr) });
      }
      return;
    }
    try {
      await markSent(db, row.id);
      log.info(`${channel}.sent`, fields);
    } catch (dbErr) {
      // Delivered but not recorded: the row is retried after its lease (at-least-once delivery).
      log.warn(`${channel}.record_failed`, { ...fields, error: describe(dbErr) });
    }
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      let batch: Delivery[];
      try {
        batch = await claimDue(db, policy);
      } catch (err) {
        log.warn(`${channel}.claim_failed`, { error: describe(err) });
        return;
      }
      await Promise.all(batch.map(deliver));
      if (batch.length === policy.batch) again = true;
    } while (again && !stopped);
  }

  function nudge(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = drain().finally(() => {
      running = undefined;
    });
  }

  const timer = setInterval(nudge, opts.pollMs);
  // The poll alone never keeps a process alive.
  (timer as { unref?: () => void }).unref?.();
  nudge();

  return {
    nudge,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
