// /v1/protect, /v1/execute, /v1/verify: the calls bots and agents make with an API key.
import { Elysia } from "elysia";
import type { Db } from "../db/index.ts";
import type { KeyAuthenticator } from "../keys/authenticate.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { PolicyVersions } from "../policies/store.ts";
import type { ReceiptAppender } from "../receipts/append.ts";
import type { UsageLimits } from "../usage/limits.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";
import { apiKeyGuard } from "../http/guards.ts";
import { ErrorResponse } from "../http/errors.ts";
import { withIdempotency } from "../http/idempotency.ts";
import { requestId } from "../http/request-state.ts";
import { assertVerdict } from "../features/gate.ts";
import { EXECUTE_WINDOW_MINUTES } from "../decide/payload.ts";
import { ProtectInput } from "../decide/policy.ts";
import { execute } from "./execute.ts";
import { ExecuteBody, ExecuteResult, ProtectResult, VerifyBody, VerifyResponse } from "./model.ts";
import { protect } from "./protect.ts";
import { verifyReceipt } from "./verify.ts";
import type { EntityFinder } from "../decide/entities.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface DecisionsDeps {
  db: Db;
  keys: KeyAuthenticator;
  log: Logger;
  metrics: Metrics;
  now: () => Date;
  policies: PolicyVersions;
  receipts: ReceiptAppender;
  usageLimits: UsageLimits;
  signer: ReceiptSigner;
  /** The entity store, for policies that read stored attributes (none: their subject and resource are not stored). */
  entities?: EntityFinder;
}

const security = [{ apiKey: [] as string[] }];
// 409 and 422 also come from Idempotency-Key (in progress, mismatch).
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse };

export function decisionsRoutes(deps: DecisionsDeps) {
  return (
    new Elysia({ name: "decisions", prefix: "/v1" })
      // Before body validation: a stranger learns nothing about the schema.
      .use(apiKeyGuard(deps.keys))
      .guard({ apiKey: true })
      .post(
        "/protect",
        async ({ principal, body, request }) => {
          assertVerdict("protect", principal.features.protect);
          return withIdempotency(deps, request, principal.tenant_id, body, () => protect(deps, principal, body, requestId(request)));
        },
        {
          body: ProtectInput,
          parse: "json",
          response: { 200: ProtectResult, ...errors },
          detail: { summary: "Decide an action under the active policy; stored as a signed receipt (quota protect_per_day)", tags: ["decisions"], security },
        },
      )
      .post(
        "/execute",
        async ({ principal, body, request }) => {
          assertVerdict("execute", principal.features.execute);
          return withIdempotency(deps, request, principal.tenant_id, body, () => execute(deps, principal, body.receipt_id, requestId(request)));
        },
        {
          body: ExecuteBody,
          parse: "json",
          response: { 200: ExecuteResult, ...errors, 404: ErrorResponse },
          detail: { summary: `Execute an ALLOWED protect receipt under ${EXECUTE_WINDOW_MINUTES} minutes old, once (quota execute_per_day)`, tags: ["decisions"], security },
        },
      )
      .post(
        "/verify",
        async ({ principal, body }) => ({ ok: true as const, ...(await verifyReceipt(deps, principal.tenant_id, body.receipt)) }),
        {
          body: VerifyBody,
          parse: "json",
          // 429: a key's own rate (docs/api.md, "Keys for agents").
          response: { 200: VerifyResponse, 400: ErrorResponse, 401: ErrorResponse, 429: ErrorResponse },
          detail: { summary: "Re-check a result: content hash, signature, decision under its policy version, stored unchanged", tags: ["decisions"], security },
        },
      )
  );
}
