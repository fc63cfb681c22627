// GET /customer/usage: each usage limit of the active policy (docs/policy.md, "Budgets and rate
// windows") with its use in the current window, per key or for the tenant.
import { Elysia, t } from "elysia";
import type { Sessions } from "../accounts/sessions.ts";
import type { Db } from "../db/index.ts";
import { sessionGuard } from "../http/guards.ts";
import { windowStart } from "../decide/engine.ts";
import { counterOf } from "../decide/usage-needs.ts";
import { ErrorResponse } from "../http/errors.ts";
import { activePolicy } from "../policies/store.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface UsageDeps {
  db: Db;
  now: () => Date;
  sessions: Sessions;
}

const Limit = t.Object({
  rule: t.String(),
  sum: t.Union([t.Literal("amount"), t.Literal("count")]),
  per: t.Union([t.Literal("key"), t.Literal("tenant")]),
  window: t.Union([t.Literal("minute"), t.Literal("hour"), t.Literal("day"), t.Literal("month")]),
  bound: t.Object({ gt: t.Optional(t.Number()), gte: t.Optional(t.Number()), lt: t.Optional(t.Number()), lte: t.Optional(t.Number()) }),
  currency: t.Union([t.String(), t.Null()]),
  window_start: t.String({ format: "date-time" }),
  usage: t.Array(t.Object({ key_id: t.Union([t.String(), t.Null()], { description: "the key (per key); null: the tenant's total" }), total: t.Number() })),
});
const UsageList = t.Object({ ok: t.Literal(true), policy: t.Object({ policy_id: t.String(), version: t.Integer() }), limits: t.Array(Limit) });

export function usageRoutes(deps: UsageDeps) {
  return new Elysia({ name: "usage", prefix: "/customer" })
    .use(sessionGuard(deps.sessions))
    .guard({ session: true })
    .get(
      "/usage",
      async ({ customer }) => {
        const policy = await activePolicy(deps.db, customer.tenant_id);
        const now = deps.now().toISOString();
        const rules = policy.document.rules.filter((r) => r.when.usage !== undefined);
        const starts = rules.map((r) => windowStart(r.when.usage!.window, now));
        const since = starts.length > 0 ? starts.reduce((a, b) => (a < b ? a : b)) : now;
        const rows = rules.length > 0 ? await deps.db.query("usage/list", [customer.tenant_id, since]) : [];
        const limits = rules.map((r, i) => {
          const u = r.when.usage!;
          const counter = counterOf(r);
          const usage = rows
            .filter((row) => row.counter === counter && row.window_start === starts[i])
            .map((row) => ({ key_id: row.scope === "*" ? null : row.scope, total: row.total }));
          const bound = Object.fromEntries((["gt", "gte", "lt", "lte"] as const).filter((k) => u[k] !== undefined).map((k) => [k, u[k]!]));
          return { rule: r.id, sum: u.sum, per: u.per, window: u.window, bound, currency: r.when.currency?.eq ?? null, window_start: starts[i], usage };
        });
        return { ok: true as const, policy: { policy_id: policy.ref.policy_id, version: policy.ref.version }, limits };
      },
      {
        response: { 200: UsageList, 401: ErrorResponse, 403: ErrorResponse },
        detail: { summary: "Each usage limit of the active policy with its use in the current window, per key or for the tenant", tags: ["plans"], security: [{ bearer: [] as string[] }] },
      },
    );
}
