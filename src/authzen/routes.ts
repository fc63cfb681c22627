// The AuthZEN Authorization API 1.0 (docs/authzen.md): warden as the policy decision point of API
// gateways that speak it. Each evaluation is a protect of the calling key's tenant.
import { Elysia } from "elysia";
import type { Config } from "../config.ts";
import type { Db } from "../db/index.ts";
import type { KeyAuthenticator } from "../keys/authenticate.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { PolicyVersions } from "../policies/store.ts";
import type { ReceiptAppender } from "../receipts/append.ts";
import type { UsageLimits } from "../usage/limits.ts";
import type { EntityFinder } from "../decide/entities.ts";
import { apiKeyGuard } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { withIdempotency } from "../http/idempotency.ts";
import { requestId } from "../http/request-state.ts";
import { assertVerdict } from "../features/gate.ts";
import { batchAnswer, evaluateBatch, evaluateOne } from "./evaluate.ts";
import { planEvaluations, toProtectInput } from "./mapping.ts";
import { searchActions, searchEntities } from "./search.ts";
import {
  ActionSearchRequest,
  ActionSearchResponse,
  Decision,
  EntitySearchResponse,
  EvaluationRequest,
  EvaluationsRequest,
  EvaluationsResponse,
  PdpMetadata,
  ResourceSearchRequest,
  SubjectSearchRequest,
} from "./model.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface AuthzenDeps {
  config: Config;
  db: Db;
  /** The stored entities searches enumerate and decisions read (src/entities/lookup.ts). */
  entities: EntityFinder;
  keys: KeyAuthenticator;
  log: Logger;
  metrics: Metrics;
  now: () => Date;
  policies: PolicyVersions;
  receipts: ReceiptAppender;
  usageLimits: UsageLimits;
}

// An API key, as X-API-Key or (as AuthZEN clients send credentials) Authorization: Bearer.
const security: Record<string, string[]>[] = [{ apiKey: [] }, { apiKeyBearer: [] }];
// 409 and 422 also come from Idempotency-Key (in progress, mismatch).
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse };

const searchErrors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse };

const ACCESS = "/access/v1";

/**
 * The refusal of a body that is not JSON on these routes: 400, as the AuthZEN certification
 * scenario requires of a PDP, where the rest of the API answers 415. Undefined elsewhere.
 */
export function authzenMediaTypeRefusal(pathname: string): AppError | undefined {
  return pathname.startsWith(`${ACCESS}/`) ? new AppError("invalid_json", "The request body is not JSON: send it as application/json.") : undefined;
}

export function authzenRoutes(deps: AuthzenDeps) {
  const base = deps.config.publicUrl;
  return new Elysia({ name: "authzen" })
    .get(
      "/.well-known/authzen-configuration",
      ({ set }) => {
        set.headers["cache-control"] = "public, max-age=300";
        return {
          policy_decision_point: base,
          access_evaluation_endpoint: `${base}${ACCESS}/evaluation`,
          access_evaluations_endpoint: `${base}${ACCESS}/evaluations`,
          search_subject_endpoint: `${base}${ACCESS}/search/subject`,
          search_resource_endpoint: `${base}${ACCESS}/search/resource`,
          search_action_endpoint: `${base}${ACCESS}/search/action`,
        };
      },
      {
        response: { 200: PdpMetadata },
        detail: { summary: "AuthZEN policy decision point metadata: where the evaluation and search endpoints are", tags: ["authzen"], security: [] },
      },
    )
    .use(accessRoutes(deps));
}

function accessRoutes(deps: AuthzenDeps) {
  return (
    new Elysia({ name: "authzen-access", prefix: ACCESS })
      // Before body validation: a stranger learns nothing about the schema.
      .use(apiKeyGuard(deps.keys))
      .guard({ apiKey: "bearer" })
      .post(
        "/evaluation",
        async ({ principal, body, request }) => {
          assertVerdict("protect", principal.features.protect);
          const input = toProtectInput(body);
          return withIdempotency(deps, request, principal.tenant_id, body, () => evaluateOne(deps, principal, input, requestId(request)));
        },
        {
          body: EvaluationRequest,
          parse: "json",
          response: { 200: Decision, ...errors },
          detail: { summary: "AuthZEN access evaluation: a protect of {subject, action, resource, context}, stored as a signed receipt (quota protect_per_day)", tags: ["authzen"], security },
        },
      )
      .post(
        "/evaluations",
        async ({ principal, body, request }) => {
          assertVerdict("protect", principal.features.protect);
          // Every evaluation is mapped before any is decided: an item that cannot be is answered closed, not stored.
          const plan = planEvaluations(body);
          if (plan.kind === "single") return withIdempotency(deps, request, principal.tenant_id, body, () => evaluateOne(deps, principal, plan.input, requestId(request)));
          return withIdempotency(deps, request, principal.tenant_id, body, async () => ({
            status: 200,
            body: batchAnswer(await evaluateBatch(deps, principal, plan.items, plan.semantic, requestId(request)), plan.itemContext),
          }));
        },
        {
          body: EvaluationsRequest,
          parse: "json",
          response: { 200: EvaluationsResponse, ...errors },
          detail: { summary: "AuthZEN access evaluations: a batch with top-level defaults and options.evaluations_semantic; each evaluation a protect receipt, named in the top-level context", tags: ["authzen"], security },
        },
      )
      // Searches are dry runs (docs/authzen.md, "Search"): no receipt, no quota, no Idempotency-Key.
      .post(
        "/search/subject",
        async ({ principal, body }) => {
          assertVerdict("protect", principal.features.protect);
          return searchEntities(deps, principal, "subject", body);
        },
        {
          body: SubjectSearchRequest,
          parse: "json",
          response: { 200: EntitySearchResponse, ...searchErrors },
          detail: { summary: "AuthZEN subject search: the stored entities of subject.type that the active policy ALLOWS the action on the resource; paged, stores nothing", tags: ["authzen"], security },
        },
      )
      .post(
        "/search/resource",
        async ({ principal, body }) => {
          assertVerdict("protect", principal.features.protect);
          return searchEntities(deps, principal, "resource", body);
        },
        {
          body: ResourceSearchRequest,
          parse: "json",
          response: { 200: EntitySearchResponse, ...searchErrors },
          detail: { summary: "AuthZEN resource search: the stored entities of resource.type on which the active policy ALLOWS the subject the action; paged, stores nothing", tags: ["authzen"], security },
        },
      )
      .post(
        "/search/action",
        async ({ principal, body }) => {
          assertVerdict("protect", principal.features.protect);
          return searchActions(deps, principal, body);
        },
        {
          body: ActionSearchRequest,
          parse: "json",
          response: { 200: ActionSearchResponse, ...searchErrors },
          detail: { summary: "AuthZEN action search: the actions the policy's rules name that the active policy ALLOWS the subject on the resource; paged, stores nothing", tags: ["authzen"], security },
        },
      )
  );
}
