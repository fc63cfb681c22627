// Mail's channel of the outbox (src/outbox/): how its messages are claimed and retried.
import type { ChannelPolicy } from "../outbox/queue.ts";

/**
 * Retries: base * 2^(attempt - 1) seconds, capped at an hour; failed after 10 attempts (about
 * 9 h). A claimed message is left alone by other instances for 2 minutes; sending times out well
 * before (src/mail/transport.ts).
 */
export const MAIL: ChannelPolicy = {
  channel: "mail",
  retry: { maxAttempts: 10, baseSeconds: 30, capSeconds: 3600 },
  leaseSeconds: 120,
  batch: 10,
};
