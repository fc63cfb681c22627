// The webhook channel of the outbox (src/outbox/): how its deliveries are claimed and retried.
import type { ChannelPolicy } from "../outbox/queue.ts";

/**
 * Retries: 1 min, 2, 4, ... doubling up to 8 h, then every 8 h: 18 attempts over about three days
 * (72.5 h from the first to the last), as Standard Webhooks' senders do. A claimed delivery is
 * left alone by other instances for a minute; an attempt ends well before (src/webhooks/post.ts).
 */
export const WEBHOOK: ChannelPolicy = {
  channel: "webhook",
  retry: { maxAttempts: 18, baseSeconds: 60, capSeconds: 8 * 3600 },
  leaseSeconds: 60,
  batch: 10,
  // webhook_id names an endpoint (whk_) everywhere else.
  logIdField: "outbox_id",
};
