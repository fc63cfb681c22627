// /customer/webhooks: a tenant's webhook endpoints with the customer's JWT (docs/api.md, Webhooks).
import { Elysia } from "elysia";
import type { Sessions } from "../accounts/sessions.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import type { WebhookTargets } from "./target.ts";
import type { WebhookWorker } from "./worker.ts";
import { sessionGuard } from "../http/guards.ts";
import { byMember } from "../audit/events.ts";
import { ErrorResponse } from "../http/errors.ts";
import { withIdempotency } from "../http/idempotency.ts";
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, rotateWebhookSecret, testWebhook } from "./manage.ts";
import { CreateWebhookBody, DeliveryList, DeliveryListQuery, SecretRotated, TestQueued, WebhookCreated, WebhookDeleted, WebhookList, WebhookParams } from "./model.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface WebhooksDeps {
  audit: AuditTrail;
  db: Db;
  log: Logger;
  sessions: Sessions;
  webhookSecrets: SecretBox;
  webhookTargets: WebhookTargets;
  webhooks: WebhookWorker;
}

const security = [{ bearer: [] as string[] }];
// 403 from the roles; 409 and 422 also from Idempotency-Key (in progress, mismatch).
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse };

export function webhooksRoutes(deps: WebhooksDeps) {
  const writes = { audit: deps.audit, secrets: deps.webhookSecrets, targets: deps.webhookTargets };
  return (
    new Elysia({ name: "webhooks", prefix: "/customer/webhooks" })
      // Before body validation: a stranger learns nothing about the schema.
      .use(sessionGuard(deps.sessions))
      .guard({ session: true })
      .post(
        "",
        ({ customer, body, request }) =>
          withIdempotency(deps, request, customer.tenant_id, body, async () => ({ status: 201, body: await createWebhook(writes, byMember(customer, request), body) })),
        {
          body: CreateWebhookBody,
          parse: "json",
          response: { 201: WebhookCreated, ...errors, 429: ErrorResponse },
          detail: {
            summary: "Add an endpoint (https, a public host) for events of the tenant; its signing secret is shown only here. At most 10 per tenant",
            tags: ["webhooks"],
            security,
          },
        },
      )
      .get("", ({ customer }) => listWebhooks(deps.db, customer.tenant_id), {
        response: { 200: WebhookList, 401: ErrorResponse, 403: ErrorResponse },
        detail: { summary: "The tenant's endpoints, newest first; never a secret", tags: ["webhooks"], security },
      })
      .post(
        "/:id/rotate-secret",
        ({ customer, params, request }) =>
          withIdempotency(deps, request, customer.tenant_id, null, async () => ({ status: 200, body: await rotateWebhookSecret(writes, byMember(customer, request), params.id) })),
        {
          params: WebhookParams,
          response: { 200: SecretRotated, ...errors },
          detail: { summary: "Give an endpoint a new signing secret; the old one also signs for 24 hours", tags: ["webhooks"], security },
        },
      )
      .delete("/:id", ({ customer, params, request }) => deleteWebhook(deps.audit, byMember(customer, request), params.id), {
        params: WebhookParams,
        response: { 200: WebhookDeleted, ...errors },
        detail: { summary: "Delete an endpoint: its pending deliveries end, its secret is erased", tags: ["webhooks"], security },
      })
      .post(
        "/:id/test",
        ({ customer, params, request }) =>
          withIdempotency(deps, request, customer.tenant_id, null, async () => ({ status: 202, body: await testWebhook(deps.db, deps.webhooks, byMember(customer, request), params.id) })),
        {
          params: WebhookParams,
          response: { 202: TestQueued, ...errors, 429: ErrorResponse },
          detail: {
            summary: "Send the endpoint a webhook.test event, whatever it subscribes to (409 webhook_disabled once it was disabled; at most 60 an hour)",
            tags: ["webhooks"],
            security,
          },
        },
      )
      .get("/:id/deliveries", ({ customer, params, query }) => listDeliveries(deps.db, customer.tenant_id, params.id, query.limit ?? 50, query.cursor), {
        params: WebhookParams,
        query: DeliveryListQuery,
        response: { 200: DeliveryList, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse },
        detail: { summary: "An endpoint's deliveries, newest first (cursor pagination): status, attempts, the last HTTP status, why the last attempt failed, the next attempt", tags: ["webhooks"], security },
      })
  );
}
