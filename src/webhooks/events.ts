// The events an endpoint may subscribe to (docs/api.md, "Webhooks"), besides "*" for all of them.
// Each is emitted by a procedure of the database, in the transaction of its change (webhook_emit()
// in sql/schema/04_webhooks.sql). webhook.test goes to one endpoint when an admin asks for it,
// whatever the endpoint subscribes to.
export const WEBHOOK_EVENTS = [
  "approval.requested",
  "approval.approved",
  "approval.denied",
  "approval.expired",
  "approval.cancelled",
  "approval.executed",
  // 7 days and 1 day before a key's expires_at (api_keys_expiring_sweep(), sql/schema/05_keys.sql).
  "key.expiring",
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const TEST_EVENT = "webhook.test";
