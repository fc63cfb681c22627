// Shapes of /features/catalog, /customer/upgrades and /customer/dashboard (docs/api.md).
import { t } from "elysia";

const Limit = t.Union([t.Integer(), t.Null()]);
export const Limits = t.Object({ protect_per_day: Limit, execute_per_day: Limit, receipts_stored: Limit });

export const Catalog = t.Object({
  ok: t.Literal(true),
  // The catalog also names how many entities a plan stores (docs/api.md, "Entities"), never unlimited.
  plans: t.Array(t.Object({ plan: t.String(), limits: t.Composite([Limits, t.Object({ entities: t.Integer() })]) })),
  features: t.Array(
    t.Object({
      feature: t.String(),
      name: t.String(),
      description: t.String(),
      required_plan: t.String(),
      access_mode: t.Union([t.Literal("self_serve"), t.Literal("request_only")]),
    }),
  ),
});

export const UpgradeRequestBody = t.Object(
  { requested_plan: t.String({ maxLength: 50 }), reason: t.String({ maxLength: 2000 }) },
  { additionalProperties: false },
);

const Status = t.Union([t.Literal("pending"), t.Literal("approved"), t.Literal("rejected"), t.Literal("cancelled")]);

const RequestedBy = t.Union([t.String({ pattern: "^mbr_" }), t.Null()], { description: "the member who asked" });

export const UpgradeCreated = t.Object({
  ok: t.Literal(true),
  request_id: t.String(),
  status: t.Literal("pending"),
  requested_plan: t.String(),
  reason: t.String(),
  created_at: t.String(),
  requested_by: RequestedBy,
});

export const UpgradeItem = t.Object({
  request_id: t.String(),
  status: Status,
  requested_plan: t.String(),
  reason: t.String(),
  created_at: t.String(),
  reviewed_at: t.Union([t.String(), t.Null()]),
  review_note: t.Union([t.String(), t.Null()]),
  requested_by: RequestedBy,
});

export const UpgradeList = t.Object({ ok: t.Literal(true), upgrades: t.Array(UpgradeItem) });

export const UpgradeIdParams = t.Object({ id: t.String() }, { additionalProperties: false });

export const UpgradeCancelled = t.Object({ ok: t.Literal(true), request_id: t.String(), status: t.Literal("cancelled") });

export const Dashboard = t.Object({
  ok: t.Literal(true),
  plan: t.String(),
  usage: t.Object({ protect_today: t.Integer(), execute_today: t.Integer(), receipts_stored: t.Integer() }),
  limits: Limits,
  keys_active: t.Integer(),
  pending_upgrade: t.Union([t.Object({ request_id: t.String(), requested_plan: t.String(), created_at: t.String() }), t.Null()]),
  history: t.Array(t.Object({ day: t.String(), protect: t.Integer(), execute: t.Integer() })),
});
