// GET /openapi.json: the OpenAPI 3.1 document of the routes, built once when the app is made and
// served as the same bytes ever after (docs/api.md is rendered from it, the SDK generated from it).
// @elysiajs/openapi reads the route table; this module makes what it reads exact:
// - every object schema states whether it is closed: Elysia closes a route's top-level schemas in
//   place when it first compiles their validators, so the same schemas read before and after some
//   traffic would differ; an object that says nothing is closed here, as the API treats it;
// - every status a route can answer is listed, the front door's and the credentials' included, with
//   the one error body of docs/api.md per status: its codes and the fields each code adds;
// - a trailing wildcard (`/tile/*`) is a named path parameter, the segment before it (`{tile}`);
// - request bodies are JSON only, and the document names its server.
import { toOpenAPISchema } from "@elysiajs/openapi";
import { t, type TSchema } from "elysia";
import { OptionalKind, Type } from "@sinclair/typebox";
import { ERROR_STATUS, type ErrorCode } from "../http/errors.ts";
import { authzenMediaTypeRefusal } from "../authzen/routes.ts";
import { ROLES } from "../accounts/roles.ts";
import { CaseResult } from "../policies/model.ts";

export const OPENAPI_PATH = "/openapi.json";
const OPENAPI_VERSION = "3.1.2";

type Json = Record<string, any>;

export interface OpenApiOptions {
  version: string;
  /** The service's public address (PUBLIC_URL): the document's one server. */
  publicUrl: string;
}

// TypeBox's Integer: Elysia's t.Integer also takes numeric strings, which a body never holds here.
const RetryAfter = Type.Integer({ minimum: 1, description: "seconds to wait before retrying (also the Retry-After header)" });

/**
 * Fields an error body adds to `ok`, `error`, `message` and `request_id`, by code; every raise of
 * the code sends them (docs/api.md, Error codes). Optional ones are marked.
 */
const ERROR_FIELDS: Partial<Record<ErrorCode, Record<string, TSchema>>> = {
  plan_required: { required_plan: t.String({ description: "the lowest plan that has the feature" }) },
  feature_not_granted: { feature: t.String({ description: "the feature an operator grants on request" }) },
  forbidden_role: { required_role: t.Union(ROLES.map((r) => t.Literal(r)), { description: "the narrowest role that may do this" }) },
  quota_exceeded: { limit: t.String({ description: "the limit reached: protect_per_day, execute_per_day, receipts_stored, key_protect_per_day, api_keys_active, policy_versions, webhooks, entities, ..." }) },
  rate_limited: { retry_after: RetryAfter, limit: t.Optional(t.Literal("key_per_second", { description: "present when the API key's own rate (limits.per_second, limits.burst) is used up" })) },
  unavailable: { retry_after: RetryAfter },
  policy_tests_failed: { results: t.Array(CaseResult, { description: "every stored test case's outcome under the refused document" }) },
};

/** Codes raised with a status other than their own (a JWT past its life is 401, docs/api.md). */
const OTHER_STATUS: [ErrorCode, number][] = [["token_expired", 401]];

const REASONS: Record<number, string> = {
  400: "Bad request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not found",
  409: "Conflict",
  413: "Payload too large",
  415: "Unsupported media type",
  422: "Unprocessable content",
  429: "Too many requests",
  500: "Internal error",
  503: "Unavailable",
};

const BODY_METHODS = new Set(["post", "put", "patch", "delete"]);

/**
 * What any request may meet before its route runs (src/app/app.ts, src/http/body.ts): 400
 * invalid_request_id, 403 https_required, 413 on a declared length over 64 KiB, 500; and on a
 * method that carries a body, 400 invalid_json and 415 (400 instead on the AuthZEN routes).
 */
function frontDoorStatuses(method: string, path: string): number[] {
  if (!BODY_METHODS.has(method)) return [400, 403, 413, 500];
  return authzenMediaTypeRefusal(path) ? [400, 403, 413, 500] : [400, 403, 413, 415, 500];
}

/**
 * What a credential adds (src/keys/authenticate.ts, src/accounts/sessions.ts): 401 for a missing,
 * bad or ended one; an API key's own rate limit, 429; a session's role and the tenant's second
 * factor rule, 403; and the database it is checked against, 503 when unreachable.
 */
function credentialStatuses(security: Json[] | undefined): number[] {
  const schemes = new Set((security ?? []).flatMap((s) => Object.keys(s)));
  const out: number[] = [];
  if (schemes.size) out.push(401, 503);
  if (schemes.has("apiKey") || schemes.has("apiKeyBearer")) out.push(429);
  if (schemes.has("bearer")) out.push(403);
  return out;
}

/** The codes answered with a status. */
function codesOf(status: number): ErrorCode[] {
  const own = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status);
  return [...own, ...OTHER_STATUS.filter(([, s]) => s === status).map(([code]) => code)];
}

/**
 * The error body for one status: one object per set of fields, each naming its codes, so a client
 * reads `limit` or `retry_after` where `error` says it is there.
 */
function errorSchema(status: number): TSchema {
  const plain = codesOf(status).filter((code) => !ERROR_FIELDS[code]);
  const variant = (codes: ErrorCode[], fields: Record<string, TSchema> = {}) =>
    t.Object(
      {
        ok: t.Literal(false),
        error: codes.length === 1 ? t.Literal(codes[0]) : t.Union(codes.map((c) => t.Literal(c))),
        message: t.String({ description: "for people; may change" }),
        request_id: t.String({ description: "the X-Request-ID of the request" }),
        ...fields,
      },
      { additionalProperties: false },
    );
  const variants = [
    ...(plain.length ? [variant(plain)] : []),
    ...codesOf(status)
      .filter((code) => ERROR_FIELDS[code])
      .map((code) => variant([code], ERROR_FIELDS[code])),
  ];
  return variants.length === 1 ? variants[0] : t.Union(variants);
}

/** A TypeBox schema as the plain JSON Schema of the document: literal unions as enums, no symbols. */
function toJsonSchema(schema: TSchema): Json {
  const plain = JSON.parse(JSON.stringify(schema));
  return literalsAsEnums(plain);
}

function literalsAsEnums(schema: Json): Json {
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s: Json) => "const" in s)) {
    const { anyOf, ...rest } = schema;
    return { ...rest, type: "string", enum: anyOf.map((s: Json) => s.const) };
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties") for (const name of Object.keys(value)) value[name] = literalsAsEnums(value[name]);
    else if (key === "anyOf" || key === "oneOf") schema[key] = value.map(literalsAsEnums);
    else if (key === "items" && typeof value === "object") schema[key] = literalsAsEnums(value);
  }
  // Variants told apart by `error`: exactly one matches.
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s: Json) => s.properties?.error)) {
    const { anyOf, ...rest } = schema;
    return { ...rest, oneOf: anyOf };
  }
  return schema;
}

/**
 * Closes every object schema that does not say whether it is open: the API refuses unknown request
 * fields and sends none it does not document. Explicit `additionalProperties` (AuthZEN's open
 * objects, records) stay as they say.
 */
function closed<T>(schema: T): T {
  closeObjects(schema);
  return schema;
}

function closeObjects(schema: unknown): void {
  if (Array.isArray(schema)) return schema.forEach(closeObjects);
  if (!schema || typeof schema !== "object") return;
  const s = schema as Json;
  if (s.type === "object" || (Array.isArray(s.type) && s.type.includes("object"))) {
    // Always the last key, wherever it came from, so the bytes do not depend on who set it first.
    const additional = s.additionalProperties ?? false;
    delete s.additionalProperties;
    s.additionalProperties = additional;
  }
  for (const [key, value] of Object.entries(s)) {
    if (key === "properties" || key === "patternProperties" || key === "$defs") Object.values(value as Json).forEach(closeObjects);
    else if (["items", "additionalProperties", "anyOf", "oneOf", "allOf", "not", "prefixItems"].includes(key)) closeObjects(value);
  }
}

/** Each schema of an operation: its parameters', its body's and its responses'. */
function forEachSchema(op: Json, fn: (schema: Json) => void): void {
  for (const p of op.parameters ?? []) fn(p.schema);
  for (const media of Object.values<Json>(op.requestBody?.content ?? {})) fn(media.schema);
  for (const response of Object.values<Json>(op.responses)) for (const media of Object.values<Json>(response.content ?? {})) fn(media.schema);
}

/**
 * Elysia's t.Integer and t.Numeric accept a numeric string too (`anyOf: [string, integer]`): its
 * coercion of queries, not something the API sends or asks for. The document keeps the number.
 */
function plainNumbers(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(plainNumbers);
  if (!schema || typeof schema !== "object") return schema;
  const s = schema as Json;
  for (const [key, value] of Object.entries(s)) s[key] = plainNumbers(value);
  const numeric = (v: Json) => v.type === "string" && (v.format === "integer" || v.format === "numeric");
  if (Array.isArray(s.anyOf) && s.anyOf.length === 2 && s.anyOf.some(numeric)) {
    const number = s.anyOf.find((v: Json) => !numeric(v));
    if (number && (number.type === "integer" || number.type === "number")) {
      const { anyOf: _, ...rest } = s;
      return { ...rest, ...number };
    }
  }
  return s;
}

/** The route's path in the document: `:id` as `{id}`, a trailing `*` named after the segment before it. */
export function documentPath(routePath: string): string {
  return routePath.replace(/:([^/]+)/g, "{$1}").replace(/\/([^/{}]+)\/\*$/, "/$1/{$1}");
}

interface Route {
  method: string;
  path: string;
  hooks: { body?: TSchema; detail?: Json };
}

/** The OpenAPI document of an app whose routes are all registered, and its bytes. */
export function buildOpenApi(app: Parameters<typeof toOpenAPISchema>[0], options: OpenApiOptions): { document: Json; json: string } {
  const generated = toOpenAPISchema(app, { staticFile: false, paths: [OPENAPI_PATH] }, undefined, undefined, OPENAPI_VERSION) as unknown as { paths: Record<string, Record<string, Json>> };
  const routes = new Map<string, Route>();
  for (const route of app.routes as unknown as Route[]) routes.set(`${route.method.toLowerCase()} ${route.path.replace(/:([^/]+)/g, "{$1}")}`, route);

  const statusesUsed = new Set<number>();
  const paths: Record<string, Record<string, Json>> = {};
  // A copy first: the generated schemas are the routes' own objects, which Elysia may still change.
  for (const [generatedPath, methods] of Object.entries(JSON.parse(JSON.stringify(generated.paths)) as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const route = routes.get(`${method} ${generatedPath}`);
      if (!route) throw new Error(`openapi: no route for ${method.toUpperCase()} ${generatedPath}`);
      const path = documentPath(route.path);
      const operation = shapeOperation(method, path, op, route);
      for (const status of Object.keys(operation.responses)) if (Number(status) >= 400) statusesUsed.add(Number(status));
      (paths[path] ??= {})[method] = operation;
    }
  }
  plainNumbers(paths);
  for (const op of Object.values(paths).flatMap((methods) => Object.values(methods))) forEachSchema(op, closeObjects);

  const statuses = [...statusesUsed].sort((a, b) => a - b);
  const document = {
    openapi: OPENAPI_VERSION,
    info: { title: "warden", version: options.version, description: "Decisions, receipts and keys for bots and agents." },
    servers: [{ url: options.publicUrl, description: "This service (its PUBLIC_URL)" }],
    paths,
    components: {
      schemas: {
        ...Object.fromEntries(statuses.map((s) => [`Error${s}`, closed(toJsonSchema(errorSchema(s)))])),
        OAuthError: {
          type: "object",
          required: ["error", "error_description", "request_id"],
          properties: { error: { type: "string" }, error_description: { type: "string" }, request_id: { type: "string" } },
          additionalProperties: false,
        },
      },
      responses: Object.fromEntries(
        statuses.map((s) => [
          `Error${s}`,
          {
            description: `${REASONS[s] ?? `Status ${s}`}: the error body, \`error\` one of ${codesOf(s).join(", ")}`,
            ...(s === 429 || s === 503 ? { headers: { "Retry-After": { description: "seconds to wait", schema: { type: "integer", minimum: 1 } } } } : {}),
            content: { "application/json": { schema: { $ref: `#/components/schemas/Error${s}` } } },
          },
        ]),
      ),
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
        // The AuthZEN routes also take the API key as a bearer token (docs/authzen.md).
        apiKeyBearer: { type: "http", scheme: "bearer", bearerFormat: "warden API key" },
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        // A remote MCP gateway's endpoint: an OAuth access token bound to that gateway (docs/mcp.md).
        oauth: { type: "http", scheme: "bearer", bearerFormat: "OAuth 2.1 access token (RFC 8707 audience: the gateway's URL)" },
      },
    },
  };
  return { document, json: JSON.stringify(document) };
}

function shapeOperation(method: string, path: string, generated: Json, route: Route): Json {
  const { responses: declared = {}, requestBody, parameters, ...rest } = generated;
  const detail = route.hooks.detail ?? {};
  const op: Json = { ...rest };
  if (path !== route.path.replace(/:([^/]+)/g, "{$1}")) {
    // The wildcard, renamed: its parameter and the operation id follow the path.
    const name = /\{([^}]+)\}$/.exec(path)![1];
    op.operationId = `${method}${path.split("/").filter(Boolean).map((segment) => (segment.startsWith("{") ? `By${capital(segment.slice(1, -1))}` : capital(segment))).join("")}`;
    op.parameters = parameters?.map((p: Json) => (p.name === "*" ? { ...p, name } : p));
  } else if (parameters) op.parameters = parameters;
  if (route.hooks.body) {
    // The service reads JSON bodies only (src/http/body.ts), whatever the route's parser; an
    // empty body reads as null, so a schema that takes null (or an optional one) needs none.
    const schema = requestBody?.content?.["application/json"]?.schema ?? JSON.parse(JSON.stringify(route.hooks.body));
    const takesNull = (s: Json): boolean => s.type === "null" || (Array.isArray(s.type) && s.type.includes("null")) || (s.anyOf ?? []).some(takesNull);
    op.requestBody = { required: !(OptionalKind in route.hooks.body) && !takesNull(schema), content: { "application/json": { schema } } };
  }
  // The plugin drops `detail.responses` when the route has a response schema: bodies it cannot
  // describe (NDJSON, binary tiles) are declared there.
  const responses: Json = { ...declared, ...(detail.responses ?? {}) };
  const statuses = new Set([...Object.keys(responses).map(Number), ...frontDoorStatuses(method, path), ...credentialStatuses(op.security)]);
  // The OAuth protocol endpoints answer RFC 6749's error body (`error`, `error_description`) at
  // these statuses (docs/api.md, "OAuth for agents"), or the service's own from the front door.
  const oauthStatuses = new Set<number>(detail["x-oauth-errors"] ?? []);
  delete op["x-oauth-errors"];
  op.responses = {};
  for (const status of [...statuses].sort((a, b) => a - b)) {
    if (oauthStatuses.has(status)) {
      op.responses[status] = {
        description: "An OAuth error (RFC 6749 5.2), or the service's error body from the front door",
        content: { "application/json": { schema: { anyOf: [{ $ref: "#/components/schemas/OAuthError" }, { $ref: `#/components/schemas/Error${status}` }] } } },
      };
    } else op.responses[status] = status >= 400 ? { $ref: `#/components/responses/Error${status}` } : responses[status];
  }
  return op;
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
