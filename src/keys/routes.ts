// /customer/keys: API key management with the customer's JWT (docs/api.md, API keys).
import { Elysia, t } from "elysia";
import type { AuditTrail } from "../audit/trail.ts";
import type { Db } from "../db/index.ts";
import type { SessionReader } from "../http/guards.ts";
import type { Logger } from "../log.ts";
import { sessionGuard } from "../http/guards.ts";
import { ErrorResponse } from "../http/errors.ts";
import { withIdempotency } from "../http/idempotency.ts";
import { byMember } from "../audit/events.ts";
import { createKey, listKeys, revokeKey, rotateKey, updateKey } from "./manage.ts";
import { CreateKeyBody, KeyCreated, KeyList, KeyListQuery, KeyParams, KeyRevoked, KeyRotated, KeyUpdated, RotateKeyBody, UpdateKeyBody } from "./model.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface KeysDeps {
  audit: AuditTrail;
  db: Db;
  log: Logger;
  sessions: SessionReader<{ tenant_id: string; member_id: string }>;
}

const security = [{ bearer: [] as string[] }];
// 409 and 422 also come from Idempotency-Key (in progress, mismatch); 429 from the key caps.
const errors = { 400: ErrorResponse, 401: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse };

export function keysRoutes(deps: KeysDeps) {
  return (
    new Elysia({ name: "keys", prefix: "/customer/keys" })
      // Before body validation: a stranger learns nothing about the schema.
      .use(sessionGuard(deps.sessions))
      .guard({ session: true })
      .post(
        "",
        ({ customer, body, request }) =>
          withIdempotency(deps, request, customer.tenant_id, body, async () => ({ status: 201, body: await createKey(deps.audit, byMember(customer, request), body) })),
        {
          body: CreateKeyBody,
          parse: "json",
          response: { 201: KeyCreated, ...errors },
          detail: { summary: "Create an API key; its secret is shown only here", tags: ["keys"], security },
        },
      )
      .get("", ({ customer, query }) => listKeys(deps.db, customer.tenant_id, query.limit ?? 50, query.cursor), {
        query: KeyListQuery,
        response: { 200: KeyList, 400: ErrorResponse, 401: ErrorResponse },
        detail: { summary: "The tenant's keys, newest first (cursor pagination), with hint, last use, revocation time and what each may do; never a secret", tags: ["keys"], security },
      })
      .patch(
        "/:key_id",
        ({ customer, params, body, request }) => updateKey(deps.audit, byMember(customer, request), params.key_id, body),
        {
          params: KeyParams,
          body: UpdateKeyBody,
          parse: "json",
          response: { 200: KeyUpdated, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse },
          detail: { summary: "Change an active key's label, expiry, enabled, actions, limits, allowed IPs or metadata; the next request with it follows", tags: ["keys"], security },
        },
      )
      .post(
        "/:key_id/rotate",
        ({ customer, params, body, request }) =>
          withIdempotency(deps, request, customer.tenant_id, body ?? null, async () => ({ status: 201, body: await rotateKey(deps.audit, byMember(customer, request), params.key_id, body?.overlap ?? 0) })),
        {
          params: KeyParams,
          body: t.Optional(RotateKeyBody),
          response: { 201: KeyRotated, ...errors, 404: ErrorResponse },
          detail: { summary: "Revoke a key and issue its successor (same label and properties) in one step; with overlap, the old secret still works that many seconds", tags: ["keys"], security },
        },
      )
      .post(
        "/:key_id/revoke",
        ({ customer, params, request }) =>
          withIdempotency(deps, request, customer.tenant_id, null, async () => ({ status: 200, body: await revokeKey(deps.audit, byMember(customer, request), params.key_id) })),
        {
          params: KeyParams,
          response: { 200: KeyRevoked, ...errors, 404: ErrorResponse },
          detail: { summary: "Revoke a key (or end a rotated key's overlap); the next request with it gets 401 key_revoked", tags: ["keys"], security },
        },
      )
  );
}
