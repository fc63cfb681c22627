// Delivers the webhook channel of the outbox (src/outbox/worker.ts). Each attempt reads the
// endpoint (a deleted or disabled one takes nothing more), opens its secrets, signs the body
// (src/webhooks/signature.ts), resolves and checks the host (src/webhooks/target.ts) and POSTs
// (src/webhooks/post.ts). A 2xx ends the delivery; 410 Gone disables the endpoint; a host that
// resolves to a non-public address ends it at once (it will not change); any other answer, or
// none, is retried with backoff (WEBHOOK in src/webhooks/outbox.ts). The reason of each failed
// attempt is the outbox row's last_error, which the deliveries list shows.
import { STATUS_CODES } from "node:http";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import type { Delivery } from "../outbox/queue.ts";
import { startOutboxWorker, type OutboxWorker } from "../outbox/worker.ts";
import { WEBHOOK } from "./outbox.ts";
import { DEFAULT_LIMITS, postOnce, type PostLimits } from "./post.ts";
import { webhookHeaders } from "./signature.ts";
import { parseTargetUrl, TargetNotPublic, type WebhookTargets } from "./target.ts";

/** "HTTP 503 Service Unavailable": the status and its standard text, for the deliveries list. */
function statusLine(status: number | null): string {
  if (status === null) return "no HTTP answer";
  const text = STATUS_CODES[status];
  return text ? `HTTP ${status} ${text}` : `HTTP ${status}`;
}

/** The webhook worker: nudge it after committing a delivery. */
export type WebhookWorker = OutboxWorker;

/** A failed attempt; `permanent` ends the delivery at once (an endpoint that takes no more). */
export class AttemptFailed extends Error {
  constructor(
    message: string,
    readonly permanent = false,
  ) {
    super(message);
    this.name = "AttemptFailed";
  }
}

/** What the outbox row of a delivery holds (webhook_enqueue()). */
interface DeliveryData {
  delivery_id: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** The body every attempt of a delivery sends, the same bytes each time. */
export function deliveryBody(type: string, data: DeliveryData): string {
  return JSON.stringify({ type, timestamp: data.timestamp, data: data.data });
}

export interface WebhookWorkerOptions {
  db: Db;
  log: Logger;
  targets: WebhookTargets;
  /** Opens the endpoints' sealed secrets (context: the webhook id). */
  secrets: SecretBox;
  pollMs: number;
  now: () => Date;
  /** Certificate authorities to trust (src/webhooks/post.ts, trustedAuthorities); undefined: the runtime's. */
  ca?: string[];
  limits?: PostLimits;
  userAgent: string;
}

export function startWebhookWorker(opts: WebhookWorkerOptions): WebhookWorker {
  const { db, log, targets, secrets } = opts;
  const limits = opts.limits ?? DEFAULT_LIMITS;

  async function signingSecrets(webhookId: string, sealed: (string | null)[]): Promise<string[]> {
    const opened: string[] = [];
    for (const value of sealed) {
      if (value === null) continue;
      try {
        opened.push(await secrets.open(value, webhookId));
      } catch {
        throw new AttemptFailed("the endpoint's secret does not open under this service secret", true);
      }
    }
    return opened;
  }

  /** One attempt; the HTTP status it got, or null for none (recorded either way). */
  async function attempt(row: Delivery): Promise<void> {
    const endpoint = await db.one("webhooks/for_delivery", [row.tenant_id, row.recipient]);
    if (endpoint?.status !== "active") throw new AttemptFailed(`the endpoint is ${endpoint?.status ?? "gone"}`, true);
    const data = row.data as unknown as DeliveryData;
    const keys = await signingSecrets(endpoint.webhook_id, [endpoint.secret_sealed, endpoint.previous_secret_sealed]);
    const body = deliveryBody(row.kind, data);
    const headers = { ...webhookHeaders(data.delivery_id, Math.floor(opts.now().getTime() / 1000), body, keys), "user-agent": opts.userAgent };
    const deadline = Date.now() + limits.timeoutMs;
    let status: number | null = null;
    try {
      const url = parseTargetUrl(endpoint.url);
      const address = await targets.resolve(url, deadline - Date.now());
      const answer = await postOnce(url, address, headers, body, { ms: deadline - Date.now(), maxResponseBytes: limits.maxResponseBytes, ca: opts.ca });
      status = answer.status >= 100 && answer.status <= 599 ? answer.status : null;
    } catch (err) {
      throw new AttemptFailed((err as Error).message, err instanceof TargetNotPublic);
    } finally {
      await db.query("webhooks/attempted", [endpoint.tenant_id, row.id, status]).catch((err: unknown) => log.warn("webhook.record_failed", { outbox_id: row.id, error: String((err as Error)?.message ?? err) }));
    }
    if (status !== null && status >= 200 && status < 300) return;
    if (status === 410) {
      await db.query("webhooks/disable", [endpoint.tenant_id, endpoint.webhook_id, "the endpoint answered 410 Gone", row.id]);
      log.warn("webhook.endpoint_disabled", { webhook_id: endpoint.webhook_id, tenant_id: endpoint.tenant_id });
      throw new AttemptFailed("HTTP 410: the endpoint is gone and now disabled", true);
    }
    throw new AttemptFailed(status !== null && status >= 300 && status < 400 ? `${statusLine(status)} (redirects are not followed)` : statusLine(status));
  }

  return startOutboxWorker({
    db,
    log,
    policy: WEBHOOK,
    pollMs: opts.pollMs,
    deliver: attempt,
    permanent: (err) => err instanceof AttemptFailed && err.permanent,
  });
}

/** A worker that delivers nothing (WEBHOOK_DELIVERY=0): deliveries wait for an instance that does. */
export const NO_WEBHOOK_WORKER: WebhookWorker = { nudge() {}, stop: async () => {} };
