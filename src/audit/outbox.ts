// Operators' audit events, signed after the fact. An operator's procedure (sql/ops/: upgrades,
// features, sessions) cannot sign, so it queues its event in audit_outbox in the transaction of its
// change (sql/schema/03_audit.sql); this worker signs each one and appends it to the tenant's log,
// marking it appended in that same transaction, so each queued event becomes exactly one receipt,
// whichever instance takes it. The one place where the signature follows the change's commit: by
// the poll interval while a service runs, or at the next start when none does.
import type { Queryable } from "../db/index.ts";
import type { Logger } from "../log.ts";
import type { EventName } from "./events.ts";
import type { AuditTrail } from "./trail.ts";

export interface AuditOutbox {
  /** Look for queued events now. Never waits, never throws. */
  nudge(): void;
  /** Signs and appends every event queued so far; resolves with how many (for tests and operators' tools). */
  drain(): Promise<number>;
  /** Stops polling and waits for the batch in flight (at most STOP_WAIT_MS: a database that hangs must not hold up a stop). */
  stop(): Promise<void>;
}

const BATCH = 50;
// A batch is one short transaction; one still running after this is stuck, and closing the
// database ends it (rolled back: its events stay queued for the next pass).
const STOP_WAIT_MS = 5_000;

/** One batch of queued events, oldest first, signed and appended in one transaction; how many. */
async function appendQueued(audit: AuditTrail): Promise<number> {
  return audit.tx(async (q, record) => {
    const rows = await q.query("audit/outbox_claim", [BATCH]);
    const appended = await record(
      ...rows.map((row) => ({
        tenantId: row.tenant_id,
        event: row.event as EventName,
        actor: { operator: row.operator },
        target: row.target as Record<string, unknown>,
        requestId: `ops-${row.id}`,
        at: row.at,
      })),
    );
    for (const [i, row] of rows.entries()) await q.query("audit/outbox_appended", [row.tenant_id, row.id, appended[i]!.receipt_id]);
    return rows.length;
  });
}

export function startAuditOutbox(opts: { db: Queryable; audit: AuditTrail; log: Logger; pollMs: number }): AuditOutbox {
  // Passes run one after another; a drain() asked for during one runs after it.
  let queue: Promise<unknown> = Promise.resolve();
  let inFlight = 0;
  let stopped = false;

  async function drainAll(): Promise<number> {
    let total = 0;
    // Most polls find nothing: one read, no transaction.
    if (((await opts.db.one("audit/outbox_pending"))?.pending ?? 0) === 0) return 0;
    for (;;) {
      const n = await appendQueued(opts.audit);
      total += n;
      if (n > 0) opts.log.info("audit.operator_events_appended", { count: n });
      if (n < BATCH || stopped) return total;
    }
  }

  function drain(): Promise<number> {
    inFlight++;
    const run = queue.then(drainAll).finally(() => inFlight--);
    queue = run.catch(() => 0);
    return run;
  }

  function nudge(): void {
    if (stopped || inFlight > 0) return;
    drain().catch((err: Error) => opts.log.warn("audit.operator_events_failed", { error: String(err?.message ?? err).slice(0, 500) }));
  }

  const timer = setInterval(nudge, opts.pollMs);
  // The poll alone never keeps a process alive.
  (timer as { unref?: () => void }).unref?.();
  nudge();

  return {
    nudge,
    drain,
    async stop() {
      stopped = true;
      clearInterval(timer);
      let giveUp: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([queue, new Promise((resolve) => (giveUp = setTimeout(resolve, STOP_WAIT_MS)))]);
      clearTimeout(giveUp);
    },
  };
}
