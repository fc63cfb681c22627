// Shapes of GET /customer/audit (docs/api.md, "The audit trail").
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { EventPayload, EventReceipt } from "../receipts/model.ts";

export const AuditQuery = t.Object(
  {
    limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1, default: 50 })),
    cursor: t.Optional(t.String({ maxLength: 200 })),
    event: t.Optional(t.String({ maxLength: 100, description: "one event (key.revoked) or a family of them (key.*)" })),
  },
  { additionalProperties: false },
);

export const AuditEntry = t.Object({
  receipt_id: t.String({ pattern: "^rcpt_" }),
  seq: Type.Integer({ minimum: 0 }),
  event: t.String(),
  actor: EventPayload.properties.actor,
  target: EventPayload.properties.target,
  at: t.String({ format: "date-time" }),
  receipt: EventReceipt,
});

export const AuditList = t.Object({
  ok: t.Literal(true),
  events: t.Array(AuditEntry),
  next_cursor: t.Union([t.String(), t.Null()]),
});
