// Shapes of the /customer/webhooks routes (docs/api.md, Webhooks).
import { t } from "elysia";
import { WEBHOOK_EVENTS } from "./events.ts";
import { URL_MAX_LENGTH } from "./target.ts";

const EventType = t.Union([t.Literal("*"), ...WEBHOOK_EVENTS.map((event) => t.Literal(event))]);

export const CreateWebhookBody = t.Object(
  {
    // https, a public host: checked beyond the schema (src/webhooks/target.ts).
    url: t.String({ minLength: 1, maxLength: URL_MAX_LENGTH }),
    events: t.Array(EventType, { minItems: 1, maxItems: 20, uniqueItems: true }),
    // No control characters (PostgreSQL text cannot hold NUL).
    description: t.Optional(t.String({ minLength: 1, maxLength: 200, pattern: "^[^\\u0000-\\u001f\\u007f]+$" })),
  },
  { additionalProperties: false },
);

export const WebhookParams = t.Object({ id: t.String() });

export const DeliveryListQuery = t.Object(
  {
    limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1, default: 50 })),
    cursor: t.Optional(t.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

const Iso = t.String({ format: "date-time" });
const WebhookId = t.String({ pattern: "^whk_" });
const Secret = t.String({ pattern: "^whsec_" });
const Events = t.Array(t.String());
const Description = t.Union([t.String(), t.Null()]);
/** active; disabled: it answered 410 Gone and takes nothing more (delete it and create another). */
const Status = t.Union([t.Literal("active"), t.Literal("disabled")]);

export const WebhookCreated = t.Object({
  ok: t.Literal(true),
  webhook_id: WebhookId,
  url: t.String(),
  events: Events,
  description: Description,
  status: t.Literal("active"),
  secret: Secret,
  created_at: Iso,
});

export const WebhookList = t.Object({
  ok: t.Literal(true),
  webhooks: t.Array(
    t.Object({
      webhook_id: WebhookId,
      url: t.String(),
      events: Events,
      description: Description,
      status: Status,
      created_at: Iso,
    }),
  ),
});

export const SecretRotated = t.Object({
  ok: t.Literal(true),
  webhook_id: WebhookId,
  secret: Secret,
  /** Until then deliveries carry a second signature, by the secret this one replaced. */
  previous_secret_expires_at: Iso,
});

export const WebhookDeleted = t.Object({ ok: t.Literal(true) });

export const TestQueued = t.Object({ ok: t.Literal(true), delivery_id: t.String({ pattern: "^dlv_" }) });

export const DeliveryList = t.Object({
  ok: t.Literal(true),
  deliveries: t.Array(
    t.Object({
      delivery_id: t.String({ pattern: "^dlv_" }),
      event: t.String(),
      status: t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("failed")]),
      attempts: t.Integer({ minimum: 0 }),
      last_status_code: t.Union([t.Integer(), t.Null()]),
      /** Why the last attempt failed ("HTTP 500 Internal Server Error", "no answer within 10 s", a TLS error, a private address); null once delivered. */
      last_error: t.Union([t.String(), t.Null()]),
      next_attempt_at: t.Union([Iso, t.Null()]),
      created_at: Iso,
    }),
  ),
  next_cursor: t.Union([t.String(), t.Null()]),
});
