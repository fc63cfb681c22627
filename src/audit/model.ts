// Shapes of GET /customer/audit (docs/api.md, "The audit trail").
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { EventPayload, StoredReceipt } from "../receipts/model.ts";

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
  event: t.String({ description: "an event's name, or an approval's step: approval.requested, .voted, .approved, .denied, .expired, .cancelled, .executed" }),
  actor: t.Union(
    [
      t.Object({ member_id: t.String() }),
      t.Object({ operator: t.String() }),
      t.Object({ key_id: t.String() }, { description: "an approval's step taken by a key: it asked, cancelled or executed" }),
      t.Object({ service: t.Literal("expiry") }, { description: "an approval that expired: nobody decided in time" }),
    ],
    { description: "who: a member, an operator, a key (an approval's request, cancel or execute), or the service (an expiry)" },
  ),
  target: EventPayload.properties.target,
  at: t.String({ format: "date-time" }),
  receipt: StoredReceipt,
});

export const AuditList = t.Object({
  ok: t.Literal(true),
  events: t.Array(AuditEntry),
  next_cursor: t.Union([t.String(), t.Null()]),
});
