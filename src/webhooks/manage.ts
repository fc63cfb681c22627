// A tenant's webhook endpoints: create (the URL checked, the secret sealed and shown once),
// list, rotate the secret, delete, send a test event, read the deliveries. Creation and deletion
// are recorded in the audit trail in the transaction of the change (src/audit/trail.ts); the
// event names the endpoint's host, never its whole URL (a path may hold a token of the receiver's).
import type { ByMember } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db, Queryable } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { couldNameRow, newId } from "../ids.ts";
import type { OutboxWorker } from "../outbox/worker.ts";
import { decodeCursor, encodeCursor } from "../receipts/cursor.ts";
import type { DeliveryList, WebhookList } from "./model.ts";
import { newWebhookSecret } from "./signature.ts";
import { TargetRefused, type WebhookTargets } from "./target.ts";

/** The HKDF purpose of the key that seals webhook signing secrets (src/crypto/secret-box.ts). */
export const WEBHOOK_SECRET_PURPOSE = "warden webhook secret v1";

/** What the writes need: the audit trail (which holds the database), the secrets' box, the URL check. */
export interface WebhookWrites {
  audit: AuditTrail;
  secrets: SecretBox;
  targets: WebhookTargets;
}

const notFound = () => new AppError("not_found", "No such webhook.");

function hostOf(url: string): string {
  return new URL(url).host;
}

export async function createWebhook(w: WebhookWrites, by: ByMember, body: { url: string; events: string[]; description?: string }) {
  let url: string;
  try {
    url = await w.targets.check(body.url);
  } catch (err) {
    if (err instanceof TargetRefused) throw new AppError("invalid_request", `body/url: ${err.message}.`);
    throw err;
  }
  const webhookId = newId("whk_");
  const secret = newWebhookSecret();
  const sealed = await w.secrets.seal(secret, webhookId);
  const row = await w.audit.tx(async (q, record) => {
    const row = (await q.one("webhooks/create", [webhookId, by.tenantId, by.actor.member_id, url, body.events, body.description ?? null, sealed]))!;
    await record({ ...by, event: "webhook.created", target: { webhook_id: webhookId, host: hostOf(url), events: row.events } });
    return row;
  });
  return { ok: true as const, webhook_id: row.webhook_id, url: row.url, events: row.events, description: row.description, status: "active" as const, secret, created_at: row.created_at };
}

export async function listWebhooks(db: Queryable, tenantId: string) {
  // status: webhooks_list() shows only the model's two (deleted endpoints are gone).
  const webhooks = (await db.query("webhooks/list", [tenantId])) as (typeof WebhookList.static)["webhooks"];
  return { ok: true as const, webhooks };
}

/** The new secret signs at once; the replaced one signs beside it for 24 h (webhook_secret_overlap()). */
export async function rotateWebhookSecret(w: Omit<WebhookWrites, "targets">, by: ByMember, webhookId: string) {
  if (!couldNameRow(webhookId)) throw notFound();
  const secret = newWebhookSecret();
  const sealed = await w.secrets.seal(secret, webhookId);
  const row = await w.audit.tx(async (q, record) => {
    const row = await q.one("webhooks/rotate_secret", [by.tenantId, by.actor.member_id, webhookId, sealed]);
    if (!row) throw notFound();
    await record({ ...by, event: "webhook.secret_rotated", target: { webhook_id: webhookId } });
    return row;
  });
  return { ok: true as const, webhook_id: row.webhook_id, secret, previous_secret_expires_at: row.previous_secret_until };
}

export async function deleteWebhook(audit: AuditTrail, by: ByMember, webhookId: string) {
  if (!couldNameRow(webhookId)) throw notFound();
  await audit.tx(async (q, record) => {
    const row = await q.one("webhooks/delete", [by.tenantId, by.actor.member_id, webhookId]);
    if (!row) throw notFound();
    await record({ ...by, event: "webhook.deleted", target: { webhook_id: webhookId, host: hostOf(row.url) } });
  });
  return { ok: true as const };
}

/** Queues a webhook.test event to the endpoint and wakes the worker; 409 webhook_disabled (WH003) for a disabled one, 429 beyond 60 an hour (WH006). */
export async function testWebhook(db: Db, worker: OutboxWorker, by: ByMember, webhookId: string) {
  if (!couldNameRow(webhookId)) throw notFound();
  const row = await db.one("webhooks/test", [by.tenantId, by.actor.member_id, webhookId]);
  if (!row) throw notFound();
  worker.nudge();
  return { ok: true as const, delivery_id: row.delivery_id };
}

/** One page of an endpoint's deliveries, newest first; next_cursor is null on the last page. */
export async function listDeliveries(db: Queryable, tenantId: string, webhookId: string, limit: number, cursor: string | undefined) {
  if (!couldNameRow(webhookId)) throw notFound();
  const before = cursor === undefined ? null : decodeCursor(cursor);
  if (before === undefined) throw new AppError("invalid_request", "query/cursor: not a cursor this service gave out.");
  const rows = await db.query("webhooks/deliveries", [tenantId, webhookId, before, limit + 1]);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const next_cursor = rows.length > limit && last ? encodeCursor(last.page_position) : null;
  // status: webhook_deliveries_page() answers only the model's three.
  const deliveries = page.map(({ page_position: _, ...delivery }) => delivery) as (typeof DeliveryList.static)["deliveries"];
  return { ok: true as const, deliveries, next_cursor };
}

/**
 * JWT_SECRET changed (JWT_SECRET_PREVIOUS set): every live endpoint's secrets that the previous
 * service secret sealed are sealed again under the new one, before the previous one is dropped.
 */
export async function resealWebhookSecrets(db: Queryable, box: SecretBox): Promise<{ resealed: number; unreadable: number }> {
  const PAGE = 500;
  let after = { tenantId: "", webhookId: "" };
  let resealed = 0;
  let unreadable = 0;
  for (;;) {
    const rows = await db.query("webhooks/sealed_page", [after.tenantId, after.webhookId, PAGE]);
    for (const row of rows) {
      const [current, previous] = await Promise.all([row.secret_sealed, row.previous_secret_sealed].map((s) => (s === null ? null : box.unseal(s, row.webhook_id))));
      if ((row.secret_sealed !== null && current === null) || (row.previous_secret_sealed !== null && previous === null)) unreadable++;
      if (current?.under !== "previous" && previous?.under !== "previous") continue;
      if (!current) continue;
      const fresh = await box.seal(current.secret, row.webhook_id);
      const freshPrevious = previous ? await box.seal(previous.secret, row.webhook_id) : row.previous_secret_sealed;
      const [done] = await db.query("webhooks/reseal", [row.tenant_id, row.webhook_id, row.secret_sealed!, row.previous_secret_sealed, fresh, freshPrevious]);
      if (done?.resealed) resealed++;
    }
    if (rows.length < PAGE) return { resealed, unreadable };
    const last = rows[rows.length - 1]!;
    after = { tenantId: last.tenant_id, webhookId: last.webhook_id };
  }
}
