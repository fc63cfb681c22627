// key.expiring (docs/api.md, "Keys for agents"): every minute, api_keys_expiring_sweep()
// (sql/schema/05_keys.sql) records the keys that came within 7 days or 1 day of their expires_at
// and tells the tenant's webhooks (event key.expiring, through webhook_emit()). Each crossing is
// told once, whichever instance's sweep finds it first; its deliveries wait for the webhook
// worker's next poll.
import type { Queryable } from "../db/index.ts";
import type { Logger } from "../log.ts";

/** One sweep: the crossings it told of. */
export async function sweepExpiringKeys(db: Queryable) {
  return db.query("keys/expiring_sweep", []);
}

export function startExpiringKeysSweeper(deps: { db: Queryable; log: Logger }, everyMs: number): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const sweep = () => {
    running = sweepExpiringKeys(deps.db)
      .then((told) => {
        if (told.length > 0) deps.log.info("keys_expiring_told", { count: told.length, deliveries: told.reduce((n, t) => n + t.queued, 0) });
      })
      .catch((err) => deps.log.warn("keys_expiring_sweep_failed", { error: String(err) }));
  };
  sweep();
  const timer = setInterval(sweep, everyMs);
  // A timer alone never keeps the process up.
  timer.unref?.();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
