// Warden as the OAuth 2.1 authorization server of its remote gateways (docs/api.md, "OAuth for
// agents"): RFC 8414 metadata, RFC 7591 registration, the authorization endpoint (which hands the
// person to the console's consent page), the consent itself, the token endpoint (RFC 6749 with
// PKCE, RFC 8707 resources) and RFC 7009 revocation. The protocol endpoints answer the RFCs' error
// bodies (`error`, `error_description`), which OAuth clients read; the consent routes, called by
// the console, answer the service's own.
import { Elysia, t } from "elysia";
import { addressLimit } from "../accounts/rate-limit.ts";
import type { Sessions } from "../accounts/sessions.ts";
import { byMember } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Config } from "../config.ts";
import type { Db } from "../db/index.ts";
import { sessionGuard } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { requestId } from "../http/request-state.ts";
import type { Logger } from "../log.ts";
import { checkAuthorization, redirectWith, SCOPE, type AuthorizationParams } from "./authorize.ts";
import { redirectUriProblem, type OAuthClients } from "./clients.ts";
import { consent } from "./grants.ts";
import { AuthorizationQuery, ClientRegistered, ConsentBody, ConsentDetails, ConsentDone, OAuthError, RegisterBody, Revoked, ServerMetadata, TokenResponse } from "./model.ts";
import { isVerifier, type OAuthTokens, type RefusalReason } from "./tokens.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface OAuthDeps {
  audit: AuditTrail;
  config: Config;
  db: Db;
  log: Logger;
  now: () => Date;
  sessions: Sessions;
  accessTokens: OAuthTokens;
  oauthClients: OAuthClients;
}

const tags = ["oauth"];
const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };
// Browser-based agents read the metadata and call the token endpoints from their own origin.
const OPEN = { "access-control-allow-origin": "*" };

/** An OAuth error body (RFC 6749 5.2), never cached. */
function oauthError(request: Request, status: number, error: string, description: string): Response {
  const headers: Record<string, string> = { ...NO_STORE, ...OPEN };
  if (status === 401) headers["www-authenticate"] = 'Basic realm="warden"';
  return Response.json({ error, error_description: description, request_id: requestId(request) }, { status, headers });
}

/** The body's parameter `name` as one string; undefined when absent; null when sent twice (RFC 6749 3.2). */
function param(body: Record<string, unknown>, name: string): string | undefined | null {
  const v = body[name];
  if (v === undefined) return undefined;
  return typeof v === "string" ? v : null;
}

const REFUSED: Record<RefusalReason, string> = {
  unknown: "The code or refresh token is not valid.",
  mismatch: "The code or refresh token was issued to another client, redirect URI or resource, or the code_verifier does not match.",
  expired: "The code or refresh token has expired.",
  reused: "The code or refresh token was already used: every token of its grant is revoked.",
  revoked: "The grant was revoked.",
};

export function oauthMetadata(config: Pick<Config, "publicUrl">) {
  const base = config.publicUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    scopes_supported: [SCOPE],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${base}/docs`,
  };
}

export function oauthRoutes(deps: OAuthDeps) {
  const issuer = deps.config.publicUrl;
  const check = (p: AuthorizationParams) => checkAuthorization(deps.db, deps.oauthClients, issuer, p);

  const registration = new Elysia({ name: "oauth-register", prefix: "/oauth" })
    // Registration is open to anyone (RFC 7591 without an initial token): counted per address as sign-up is.
    .use(addressLimit(deps))
    .post(
      "/register",
      async ({ body, request, set }) => {
        for (const [i, uri] of body.redirect_uris.entries()) {
          const problem = redirectUriProblem(uri);
          if (problem) return oauthError(request, 400, "invalid_redirect_uri", `redirect_uris/${i} ${problem}.`);
        }
        const client = await deps.oauthClients.register({ ...body, client_uri: body.client_uri?.startsWith("https://") ? body.client_uri : undefined });
        set.status = 201;
        Object.assign(set.headers, NO_STORE, OPEN);
        return {
          client_id: client.client_id,
          client_id_issued_at: Math.floor(Date.parse(client.created_at) / 1000),
          client_name: client.client_name,
          redirect_uris: client.redirect_uris,
          token_endpoint_auth_method: "none" as const,
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          ...(client.client_uri ? { client_uri: client.client_uri } : {}),
        };
      },
      {
        body: RegisterBody,
        response: { 201: ClientRegistered, 400: t.Union([OAuthError, ErrorResponse]), 413: ErrorResponse, 415: ErrorResponse, 429: ErrorResponse },
        detail: { summary: "Register a public OAuth client (RFC 7591): redirect URIs https, or http on a loopback host; no secret is issued", tags, security: [], "x-oauth-errors": [400] },
      },
    );

  return new Elysia({ name: "oauth" })
    // Browser-based agents ask before they POST from their own origin (CORS preflight); nothing here reads a cookie.
    .options("/.well-known/oauth-authorization-server", preflight, hidden)
    .options("/oauth/register", preflight, hidden)
    .options("/oauth/token", preflight, hidden)
    .options("/oauth/revoke", preflight, hidden)
    .get(
      "/.well-known/oauth-authorization-server",
      ({ set }) => {
        set.headers["cache-control"] = "public, max-age=300";
        Object.assign(set.headers, OPEN);
        return oauthMetadata(deps.config);
      },
      { response: { 200: ServerMetadata }, detail: { summary: "OAuth 2.0 authorization server metadata (RFC 8414)", tags, security: [] } },
    )
    .use(registration)
    .group("/oauth", (app) =>
      app
        .get(
          "/authorize",
          async ({ query, request }) => {
            const checked = await check(query);
            if (checked.kind === "show") throw new AppError("invalid_request", checked.message);
            if (checked.kind === "redirect") {
              return redirect(redirectWith(checked.redirectUri, { error: checked.error, error_description: checked.description, state: checked.state }, issuer));
            }
            // The person signs in (if need be) and consents in the console, which reads the same parameters.
            return consentHandoff(`${issuer}/console/consent${new URL(request.url).search}`);
          },
          {
            query: AuthorizationQuery,
            detail: {
              summary: "The authorization endpoint: checks the request and sends the browser to the console's consent page (a bad client or redirect URI is shown, never redirected to)",
              tags,
              security: [],
              responses: {
                200: {
                  description: "A page that takes the browser on to the console's consent page with the same query (at once, and by its one link)",
                  content: { "text/html": { schema: { type: "string" } } },
                },
                302: {
                  description: "A problem the client must hear of: to its redirect URI with `error`, `error_description`, `state` and `iss`",
                  headers: { Location: { schema: { type: "string" } } },
                },
                400: { description: "The client or the redirect URI cannot be trusted: shown, not redirected" },
              },
            },
          },
        )
        .post(
          "/token",
          async ({ body, request }) => {
            const b = body as Record<string, unknown>;
            for (const name of ["grant_type", "code", "code_verifier", "redirect_uri", "client_id", "refresh_token", "resource", "scope"]) {
              if (param(b, name) === null) return oauthError(request, 400, "invalid_request", `${name} must be sent once, as a string.`);
            }
            const clientId = param(b, "client_id");
            if (typeof b.client_secret === "string" || request.headers.has("authorization")) {
              return oauthError(request, 401, "invalid_client", "Clients here are public: send client_id and no secret.");
            }
            if (!clientId) return oauthError(request, 401, "invalid_client", "Send client_id (token_endpoint_auth_method none).");
            const resource = param(b, "resource") ?? null;
            const grantType = param(b, "grant_type");
            let outcome;
            if (grantType === "authorization_code") {
              const code = param(b, "code");
              const verifier = param(b, "code_verifier");
              const redirectUri = param(b, "redirect_uri");
              if (!code) return oauthError(request, 400, "invalid_request", "code is required.");
              if (!verifier) return oauthError(request, 400, "invalid_request", "code_verifier is required (PKCE).");
              if (!isVerifier(verifier)) return oauthError(request, 400, "invalid_grant", "code_verifier is not 43 to 128 unreserved characters.");
              if (!redirectUri) return oauthError(request, 400, "invalid_request", "redirect_uri is required.");
              outcome = await deps.accessTokens.redeemCode(code, { clientId, redirectUri, resource, verifier, requestId: requestId(request) });
            } else if (grantType === "refresh_token") {
              const refreshToken = param(b, "refresh_token");
              if (!refreshToken) return oauthError(request, 400, "invalid_request", "refresh_token is required.");
              outcome = await deps.accessTokens.refresh(refreshToken, { clientId, resource, requestId: requestId(request) });
            } else if (grantType === undefined) {
              return oauthError(request, 400, "invalid_request", "grant_type is required.");
            } else {
              return oauthError(request, 400, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token.");
            }
            if (!outcome.ok) {
              if (outcome.reason === "reused") deps.log.warn("oauth_token_reused", { request_id: requestId(request), grant_id: outcome.grant_id, grant_type: grantType });
              if (outcome.reason === "mismatch" && resource !== null && outcome.grant_id === null) {
                return oauthError(request, 400, "invalid_target", "resource is not the gateway this grant is for.");
              }
              return oauthError(request, 400, "invalid_grant", REFUSED[outcome.reason]);
            }
            const { grant_id: _, ...tokens } = outcome.tokens;
            return Response.json(tokens, { headers: { ...NO_STORE, ...OPEN } });
          },
          {
            body: TokenForm,
            response: { 200: TokenResponse, 400: t.Union([OAuthError, ErrorResponse]), 401: OAuthError, 413: ErrorResponse, 415: ErrorResponse },
            detail: {
              summary: "The token endpoint (application/x-www-form-urlencoded): authorization_code with PKCE, or a refresh_token, which rotates; a code or refresh token used twice revokes its grant",
              tags,
              security: [],
              "x-oauth-errors": [400, 401],
            },
          },
        )
        .post(
          "/revoke",
          async ({ body, request }) => {
            const b = body as Record<string, unknown>;
            const token = param(b, "token");
            const clientId = param(b, "client_id");
            if (!token || clientId === null) return oauthError(request, 400, "invalid_request", "token is required, once.");
            // RFC 7009 2.2: an unknown or another client's token gets the same 200.
            await deps.accessTokens.revokeToken(token, clientId ?? null, requestId(request));
            return Response.json({}, { headers: { ...NO_STORE, ...OPEN } });
          },
          {
            body: TokenForm,
            response: { 200: Revoked, 400: t.Union([OAuthError, ErrorResponse]), 413: ErrorResponse, 415: ErrorResponse },
            detail: { summary: "Revoke a token (RFC 7009): an access or refresh token ends its whole grant; an unknown token is answered alike", tags, security: [], "x-oauth-errors": [400] },
          },
        )
        // The consent: the console's calls, with the person's session.
        .use(sessionGuard(deps.sessions))
        .guard({ session: true })
        .get(
          "/consent",
          async ({ customer, query }) => {
            const checked = await check(query);
            if (checked.kind !== "ok") throw new AppError("invalid_request", checked.kind === "show" ? checked.message : checked.description);
            const { request: req } = checked;
            // Only a member of the gateway's tenant consents, through a session of that tenant.
            if (req.gateway.tenant_id !== customer.tenant_id) throw new AppError("not_found", "This gateway is not in the tenant you are signed in to: switch to its tenant if you are a member.");
            return {
              ok: true as const,
              client: { client_id: req.client.client_id, client_name: req.client.client_name, client_uri: req.client.client_uri, kind: req.client.kind },
              gateway: { gateway_id: req.gateway.gateway_id, name: req.gateway.name, tenant_id: req.gateway.tenant_id, resource: req.resource },
              redirect_uri: req.redirectUri,
              scope: req.scope,
              member: { member_id: customer.member_id, role: customer.role },
            };
          },
          {
            query: AuthorizationQuery,
            response: { 200: ConsentDetails, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse },
            detail: { summary: "What the consent page shows: the agent, the gateway and its tenant, the scope (the authorization request's parameters, checked again)", tags, security: [{ bearer: [] }] },
          },
        )
        .post(
          "/consent",
          async ({ customer, body, request }) => {
            sameOrigin(request, issuer);
            const { approve, ...params } = body;
            const checked = await check(params);
            if (checked.kind === "show") throw new AppError("invalid_request", checked.message);
            if (checked.kind === "redirect") {
              return { ok: true as const, redirect_to: redirectWith(checked.redirectUri, { error: checked.error, error_description: checked.description, state: checked.state }, issuer) };
            }
            const { request: req } = checked;
            if (req.gateway.tenant_id !== customer.tenant_id) throw new AppError("not_found", "This gateway is not in the tenant you are signed in to: switch to its tenant if you are a member.");
            if (!approve) {
              return { ok: true as const, redirect_to: redirectWith(req.redirectUri, { error: "access_denied", error_description: "The person declined.", state: req.state }, issuer) };
            }
            const made = await consent(deps.audit, deps.accessTokens, byMember(customer, request), req);
            return { ok: true as const, grant_id: made.grant_id, redirect_to: redirectWith(req.redirectUri, { code: made.code, state: req.state }, issuer) };
          },
          {
            body: ConsentBody,
            response: { 200: ConsentDone, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 413: ErrorResponse, 415: ErrorResponse },
            detail: {
              summary: "The person's answer: approve makes a grant and a one-time code for the agent's redirect URI; refuse sends access_denied. Only from the console's own origin",
              tags,
              security: [{ bearer: [] }],
            },
          },
        ),
    );
}

/** The token and revocation endpoints' form fields (RFC 6749 4.1.3, 6; RFC 7009 2.1), checked by the handler. */
const Field = t.Optional(t.Union([t.String({ maxLength: 4000 }), t.Array(t.String({ maxLength: 4000 }), { maxItems: 10 })]));
const TokenForm = t.Object(
  {
    grant_type: Field,
    code: Field,
    code_verifier: Field,
    redirect_uri: Field,
    client_id: Field,
    refresh_token: Field,
    resource: Field,
    scope: Field,
    token: Field,
    token_type_hint: Field,
  },
  { additionalProperties: true },
);

const hidden = { detail: { hide: true } };

function preflight(): Response {
  return new Response(null, {
    status: 204,
    headers: { ...OPEN, "access-control-allow-methods": "GET, POST", "access-control-allow-headers": "content-type, mcp-protocol-version", "access-control-max-age": "600" },
  });
}

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * The step from the authorization endpoint to the console: a page that goes on at once (a meta
 * refresh, no script, under the console's CSP) and holds the same link for a person to follow.
 */
function consentHandoff(url: string): Response {
  const href = escapeHtml(url);
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${href}"><meta name="referrer" content="no-referrer"><title>warden: review this request</title></head><body><p><a href="${href}">Continue to warden to review the agent's request</a></p></body></html>`;
  return new Response(html, { status: 200, headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": "default-src 'none'; frame-ancestors 'none'", "x-frame-options": "DENY", ...NO_STORE } });
}

function redirect(location: string): Response {
  return new Response(null, { status: 302, headers: { location, ...NO_STORE } });
}

/**
 * A consent comes from the console's own pages: a browser's cross-site request (an Origin, or
 * Sec-Fetch-Site, of another site) is refused before anything is read. The session token is in
 * the console's sessionStorage, never a cookie, so no other site can send it anyway.
 */
function sameOrigin(request: Request, issuer: string): void {
  const origin = request.headers.get("origin");
  const own = new Set([new URL(issuer).origin, new URL(request.url).origin]);
  const site = request.headers.get("sec-fetch-site");
  if ((origin !== null && !own.has(origin)) || (site !== null && site !== "same-origin" && site !== "none")) {
    throw new AppError("invalid_request", "A consent is given on this service's own console page; a cross-site request is refused.");
  }
}
