// GET /customer/dashboard: today's usage against the plan's limits, and what the console shows
// beside it. Days are UTC days of the application clock, as the quotas count them.
import type { Queryable } from "../db/index.ts";
import { usageSummary } from "../receipts/store.ts";
import { utcDay } from "../utc-day.ts";

export const HISTORY_DAYS = 14;

export async function loadDashboard(db: Queryable, tenantId: string, now: Date) {
  const day = utcDay(now);
  const [usage, counts, history] = await Promise.all([
    usageSummary(db, tenantId, day),
    db.one("plans/dashboard", [tenantId]),
    db.query("plans/usage_history", [tenantId, HISTORY_DAYS, day]),
  ]);
  if (!usage || !counts) throw new Error(`no tenant ${tenantId}`);
  return {
    ok: true as const,
    plan: usage.plan,
    usage: { protect_today: usage.protect_today, execute_today: usage.execute_today, receipts_stored: usage.receipts_stored },
    limits: { protect_per_day: usage.protect_per_day, execute_per_day: usage.execute_per_day, receipts_stored: usage.receipts_stored_limit },
    keys_active: Number(counts.keys_active),
    pending_upgrade: counts.pending_request_id
      ? { request_id: counts.pending_request_id, requested_plan: counts.pending_plan!, created_at: counts.pending_created_at! }
      : null,
    history,
  };
}
