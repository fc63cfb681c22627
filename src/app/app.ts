// The HTTP shell: one Elysia app with every capability's routes, the front door that every
// request passes (request id, HTTPS, body limits), and the one place where failures become the
// error body of docs/api.md.
import { Elysia } from "elysia";
import { accountsRoutes } from "../accounts/routes.ts";
import { customerAccountRoutes } from "../accounts/customer-routes.ts";
import { tenantRoutes } from "../accounts/tenant-routes.ts";
import { approvalsRoutes } from "../approvals/routes.ts";
import { usageRoutes } from "../usage/routes.ts";
import { membersRoutes } from "../members/routes.ts";
import { receiptsRoutes } from "../receipts/routes.ts";
import { catalogRoutes, plansRoutes } from "../plans/routes.ts";
import { simulationRoutes } from "../simulation/routes.ts";
import { decisionsRoutes } from "../decisions/routes.ts";
import { keysRoutes } from "../keys/routes.ts";
import { policiesRoutes } from "../policies/routes.ts";
import { consoleRoutes } from "../console/routes.ts";
import { auditRoutes } from "../audit/routes.ts";
import { mailRoutes } from "../mail/routes.ts";
import { authzenMediaTypeRefusal, authzenRoutes } from "../authzen/routes.ts";
import { webhooksRoutes } from "../webhooks/routes.ts";
import { gatewaysRoutes } from "../gateways/routes.ts";
import { systemRoutes } from "./system-routes.ts";
import { docsRoutes } from "./docs-routes.ts";
import { buildOpenApi } from "./openapi.ts";
import { checkBodyHeaders, isFormBody, readFormBody, readJsonBody } from "../http/body.ts";
import type { Deps } from "./deps.ts";
import { AppError, errorBody, toAppError } from "../http/errors.ts";
import { attachState, requestState, type RequestState } from "../http/request-state.ts";
import { clientAddress } from "../http/client-address.ts";
import { newId } from "../ids.ts";
import { entitiesRoutes } from "../entities/routes.ts";
import { oauthRoutes } from "../oauth/routes.ts";
import { grantsRoutes } from "../oauth/grants-routes.ts";

/** The OAuth endpoints that take application/x-www-form-urlencoded as RFC 6749 and RFC 7009 say (docs/api.md, "OAuth for agents"). */
const FORM_PATHS = new Set(["/oauth/token", "/oauth/revoke"]);

// 1 to 128 visible ASCII characters (docs/api.md).
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

const SECURITY_HEADERS: Record<string, string> = {
  "strict-transport-security": "max-age=63072000; includeSubDomains",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};

function validationMessage(error: unknown): string {
  // Only the failing path and TypeBox's short message: never the schema or the value.
  const first = (error as { all?: { path?: string; message?: string }[] }).all?.[0];
  if (!first) return "The request is not valid.";
  const where = (error as { type?: string }).type ?? "body";
  return `${where}${first.path || ""}: ${first.message ?? "invalid"}`;
}

/** The error body of docs/api.md for a failure, with its status and headers; noted for the front door's counts. */
function errorResponse(failure: AppError, state: RequestState): Response {
  state.failure = { code: failure.code, limit: failure.options.fields?.limit };
  return Response.json(errorBody(failure, state.id), { status: failure.status, headers: failure.options.headers });
}

/** Adds state.ip, worked out on first read and kept. */
function lazyAddress(state: RequestState, resolve: () => string | undefined): RequestState {
  let known = false;
  let ip: string | undefined;
  return Object.defineProperty(state, "ip", {
    enumerable: true,
    get() {
      if (!known) {
        ip = resolve();
        known = true;
      }
      return ip;
    },
  });
}

export function createApp(deps: Deps) {
  // Built once every route is in (below): the same bytes whatever requests come first.
  let openApiJson = "";
  const app = new Elysia({ normalize: false })
    .onParse(({ request }) => (isFormBody(request) ? readFormBody(request) : readJsonBody(request)))
    .onError(({ error, code, request, route, set }) => {
      const state = requestState(request);
      state.route = route || undefined;
      let failure: AppError;
      if (code === "VALIDATION") failure = new AppError("invalid_request", validationMessage(error));
      else if (code === "NOT_FOUND") failure = new AppError("not_found");
      else if (code === "PARSE") {
        // Our parser's own refusals (413, bad UTF-8) arrive wrapped in Elysia's ParseError.
        const cause = (error as { cause?: unknown }).cause;
        failure = cause instanceof AppError ? cause : new AppError("invalid_json");
      }
      else {
        const { error: mapped, unexpected } = toAppError((error as { cause?: unknown }).cause instanceof AppError ? (error as { cause: unknown }).cause : error);
        if (unexpected) deps.log.error("unexpected_error", { request_id: state.id, route, error: String((error as Error)?.stack ?? error) });
        failure = mapped;
      }
      set.status = failure.status;
      return errorResponse(failure, state);
    })
    .onAfterHandle(({ request, route }) => {
      requestState(request).route = route;
    })
    .use(systemRoutes(deps))
    .use(docsRoutes(() => openApiJson))
    .use(accountsRoutes(deps))
    .use(simulationRoutes(deps))
    .use(receiptsRoutes(deps))
    .use(auditRoutes(deps))
    .use(keysRoutes(deps))
    .use(policiesRoutes(deps))
    .use(decisionsRoutes(deps))
    .use(authzenRoutes(deps))
    .use(catalogRoutes(deps))
    .use(plansRoutes(deps))
    .use(customerAccountRoutes(deps))
    .use(membersRoutes(deps))
    .use(tenantRoutes(deps))
    .use(approvalsRoutes(deps))
    .use(usageRoutes(deps))
    .use(mailRoutes(deps))
    .use(webhooksRoutes(deps))
    .use(gatewaysRoutes(deps))
    .use(entitiesRoutes(deps))
    .use(oauthRoutes(deps))
    .use(grantsRoutes(deps))
    .use(consoleRoutes(deps));
  openApiJson = buildOpenApi(app, { version: deps.version, publicUrl: deps.config.publicUrl }).json;
  const http = deps.metrics.http(app.routes.map((r) => r.path));

  /**
   * Every request enters here: the front door, then the app, then the common headers and the log
   * line. info.ip is the socket's peer address, or a function that asks for it: only sign-up,
   * log-in and security events read the client address, so most requests never pay for the system
   * call.
   */
  async function handle(request: Request, info: { ip?: string | (() => string | undefined) } = {}): Promise<Response> {
    const started = performance.now();
    const sent = request.headers.get("x-request-id");
    const validId = sent === null || REQUEST_ID.test(sent);
    const peer = info.ip;
    const state = lazyAddress({ id: sent !== null && validId ? sent : newId("req_"), started }, () =>
      clientAddress(typeof peer === "function" ? peer() : peer, request.headers.get("x-forwarded-for"), deps.config.trustProxy),
    );
    attachState(request, state);
    let response: Response;
    try {
      if (!validId) throw new AppError("invalid_request_id", "X-Request-ID must be 1 to 128 visible ASCII characters.");
      if (!request.url.startsWith("https:")) {
        const proxied = deps.config.trustProxy && request.headers.get("x-forwarded-proto")?.toLowerCase() === "https";
        if (!proxied) throw new AppError("https_required");
      }
      checkBodyHeaders(request, (r) => authzenMediaTypeRefusal(new URL(r.url).pathname), (r) => FORM_PATHS.has(new URL(r.url).pathname));
      response = await app.handle(request);
    } catch (err) {
      response = errorResponse(toAppError(err).error, state);
    }
    response.headers.set("x-request-id", state.id);
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) if (!response.headers.has(name)) response.headers.set(name, value);
    const { status } = response;
    const ms = performance.now() - started;
    http.record(request.method, state.route, status, ms / 1000);
    if (status === 401 || status === 429) deps.metrics.refusal(status, state.failure?.code, state.failure?.limit);
    const line: Record<string, unknown> = {
      method: request.method,
      route: state.route ?? null,
      status,
      duration_ms: Math.round(ms * 100) / 100,
      request_id: state.id,
    };
    if (state.tenantId !== undefined) line.tenant_id = state.tenantId;
    if (state.keyId !== undefined) line.key_id = state.keyId;
    deps.log.info("request", line);
    return response;
  }

  /** The bytes GET /openapi.json serves (src/app/openapi.ts). */
  const openApi = openApiJson;
  return { app, handle, openApi };
}

export type App = ReturnType<typeof createApp>;
