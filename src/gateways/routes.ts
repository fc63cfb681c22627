// /customer/mcp/gateways: a tenant's remote MCP gateways with the customer's JWT; /mcp/{gateway_id}:
// each gateway's MCP endpoint for agents with an OAuth access token; and its Protected Resource
// Metadata (docs/api.md, "Remote MCP gateways").
import { Elysia, t } from "elysia";
import type { Sessions } from "../accounts/sessions.ts";
import type { Approvals } from "../approvals/approvals.ts";
import type { ApprovalWaiters } from "../approvals/waiters.ts";
import type { AuditTrail } from "../audit/trail.ts";
import { byMember } from "../audit/events.ts";
import type { Config } from "../config.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import type { EntityFinder } from "../decide/entities.ts";
import { ErrorResponse } from "../http/errors.ts";
import { sessionGuard } from "../http/guards.ts";
import { withIdempotency } from "../http/idempotency.ts";
import type { KeyAuthenticator } from "../keys/authenticate.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { AccessGrant, AccessTokens } from "../oauth/access.ts";
import { gatewayResource, GATEWAY_SCOPE, type GatewayResource } from "../oauth/resources.ts";
import type { PolicyVersions } from "../policies/store.ts";
import type { ReceiptAppender } from "../receipts/append.ts";
import type { UsageLimits } from "../usage/limits.ts";
import type { WebhookTargets } from "../webhooks/target.ts";
import { trustedAuthorities } from "../webhooks/post.ts";
import { authorize, serveMcp, servingGateway } from "./endpoint.ts";
import { createGateway, deleteGateway, deleteMemberSecret, getGateway, listGateways, setGatewayEnabled, setMemberSecret } from "./manage.ts";
import { CreateGatewayBody, Done, Gateway, GatewayList, GatewayParams, GatewayStatus, PatchGatewayBody, ProtectedResourceMetadata, SecretBody, SecretDeleted, SecretStored } from "./model.ts";

/** How long a tools/call held for approval waits for people, unless the root says otherwise. */
export const APPROVAL_WAIT_MS = 50_000;

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface GatewaysDeps {
  config: Config;
  audit: AuditTrail;
  db: Db;
  log: Logger;
  sessions: Sessions;
  keys: KeyAuthenticator;
  metrics: Metrics;
  now: () => Date;
  policies: PolicyVersions;
  receipts: ReceiptAppender;
  usageLimits: UsageLimits;
  entities?: EntityFinder;
  approvals: Approvals;
  approvalWaiters: ApprovalWaiters;
  accessTokens: AccessTokens;
  gatewaySecrets: SecretBox;
  webhookTargets: WebhookTargets;
  /** How long a call held for approval waits (tests shorten it); APPROVAL_WAIT_MS when absent. */
  gatewayApprovalWaitMs?: number;
}

const security = [{ bearer: [] as string[] }];
// 403 from the roles; 409 and 422 also from Idempotency-Key (in progress, mismatch).
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse };

function registryRoutes(deps: GatewaysDeps) {
  const publicUrl = deps.config.publicUrl;
  const writes = { audit: deps.audit, secrets: deps.gatewaySecrets, targets: deps.webhookTargets, publicUrl };
  return (
    new Elysia({ name: "gateways", prefix: "/customer/mcp/gateways" })
      // Before body validation: a stranger learns nothing about the schema.
      .use(sessionGuard(deps.sessions))
      .guard({ session: true })
      .post(
        "",
        ({ customer, body, request }) =>
          withIdempotency(deps, request, customer.tenant_id, body, async () => ({ status: 201, body: await createGateway(writes, byMember(customer, request), body) })),
        {
          body: CreateGatewayBody,
          parse: "json",
          response: { 201: Gateway, ...errors, 429: ErrorResponse },
          detail: {
            summary: "Register an upstream MCP server (Streamable HTTP, https, a public host) under a name; warden serves it at the answer's url and decides its every tools/call. Admin or owner",
            tags: ["gateways"],
            security,
          },
        },
      )
      .get("", ({ customer }) => listGateways(deps.db, publicUrl, customer.tenant_id, customer.member_id), {
        response: { 200: GatewayList, 401: ErrorResponse, 403: ErrorResponse },
        detail: { summary: "The tenant's live gateways (active and disabled), newest first; never a secret", tags: ["gateways"], security },
      })
      .get("/:id", ({ customer, params }) => getGateway(deps.db, publicUrl, customer.tenant_id, customer.member_id, params.id), {
        params: GatewayParams,
        response: { 200: Gateway, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse },
        detail: { summary: "One live gateway; never a secret", tags: ["gateways"], security },
      })
      .patch("/:id", ({ customer, params, body, request }) => setGatewayEnabled(deps.audit, byMember(customer, request), params.id, body.enabled), {
        params: GatewayParams,
        body: PatchGatewayBody,
        parse: "json",
        response: { 200: GatewayStatus, ...errors },
        detail: { summary: "Disable a gateway (its endpoint answers 404 to everyone) or enable it again. Admin or owner", tags: ["gateways"], security },
      })
      .delete("/:id", ({ customer, params, request }) => deleteGateway(deps.audit, byMember(customer, request), params.id), {
        params: GatewayParams,
        response: { 200: Done, ...errors },
        detail: { summary: "Delete a gateway for good: its endpoint answers 404, its secrets and the members' secrets are erased, its key revoked. Admin or owner", tags: ["gateways"], security },
      })
      .put("/:id/secret", ({ customer, params, body, request }) => setMemberSecret(writes, byMember(customer, request), params.id, body.secret), {
        params: GatewayParams,
        body: SecretBody,
        parse: "json",
        response: { 200: SecretStored, ...errors },
        detail: {
          summary: "Store your own secret for a per_member gateway's upstream (sent as Authorization: Bearer when your agents call through it); sealed, never shown back. Any member, for themself",
          tags: ["gateways"],
          security,
        },
      })
      .delete("/:id/secret", ({ customer, params, request }) => deleteMemberSecret(deps.audit, byMember(customer, request), params.id), {
        params: GatewayParams,
        response: { 200: SecretDeleted, ...errors },
        detail: { summary: "Erase your own secret for a gateway's upstream", tags: ["gateways"], security },
      })
  );
}

const McpParams = t.Object({ gateway_id: t.String() });
const mcpSecurity = [{ oauth: [GATEWAY_SCOPE] }];
const McpAnswer = t.Unknown({ description: "the MCP Streamable HTTP answer: a JSON-RPC message (application/json) or an event stream (text/event-stream), as the upstream gave it; a tools/call's result carries its receipts in _meta.warden" });

/** The MCP endpoint of each gateway, and where a client learns how to get a token for it. */
function endpointRoutes(deps: GatewaysDeps) {
  const publicUrl = deps.config.publicUrl;
  const endpoint = { ...deps, publicUrl, approvalWaitMs: deps.gatewayApprovalWaitMs ?? APPROVAL_WAIT_MS, upstreamCa: trustedAuthorities(deps.config.extraCaCerts) };
  // The gateway and the grant, resolved before the body is parsed: without a valid token the answer is 401.
  const admitted = new WeakMap<Request, { gateway: GatewayResource; grant: AccessGrant }>();
  const admit = async ({ request, params }: { request: Request; params: Record<string, string> }) => {
    admitted.set(request, await authorize(endpoint, request, params.gateway_id ?? ""));
  };
  const serve = ({ request, body }: { request: Request; body?: unknown }) => {
    const { gateway, grant } = admitted.get(request)!;
    return serveMcp(endpoint, request, gateway, grant, body);
  };
  const responses = { 200: McpAnswer, 202: t.Unknown({ description: "a notification or response accepted" }), 400: McpAnswer, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse };
  const detail = (summary: string) => ({ summary, tags: ["gateways"], security: mcpSecurity });
  return new Elysia({ name: "gateways-endpoint" })
    .post("/mcp/:gateway_id", serve, {
      params: McpParams,
      transform: admit,
      // The body is JSON-RPC, read as it came (the app's parser: JSON, at most 64 KiB).
      parse: "json",
      body: t.Unknown(),
      response: responses,
      detail: detail(
        "MCP Streamable HTTP: a JSON-RPC message from the agent, with an OAuth access token for this gateway (401 with WWW-Authenticate otherwise). tools/call is decided first; everything else passes through to the upstream",
      ),
    })
    .get("/mcp/:gateway_id", serve, {
      params: McpParams,
      transform: admit,
      response: { ...responses, 405: t.Unknown({ description: "the upstream offers no stream" }) },
      detail: detail("MCP Streamable HTTP: the upstream's event stream for server-to-client messages, passed through"),
    })
    .delete("/mcp/:gateway_id", serve, {
      params: McpParams,
      transform: admit,
      response: { ...responses, 405: t.Unknown({ description: "the upstream does not end sessions" }) },
      detail: detail("MCP Streamable HTTP: ends the upstream session named by Mcp-Session-Id"),
    })
    .get(
      "/.well-known/oauth-protected-resource/mcp/:gateway_id",
      async ({ params }) => {
        const gateway = await servingGateway(deps.db, params.gateway_id);
        return {
          resource: gatewayResource(publicUrl, gateway.gateway_id),
          authorization_servers: [publicUrl],
          scopes_supported: [GATEWAY_SCOPE],
          bearer_methods_supported: ["header"],
          resource_name: `warden MCP gateway ${gateway.name}`,
        };
      },
      {
        params: McpParams,
        response: { 200: ProtectedResourceMetadata, 404: ErrorResponse },
        detail: { summary: "OAuth 2.0 Protected Resource Metadata (RFC 9728) of a gateway: its resource URL and warden as its authorization server", tags: ["gateways"], security: [] },
      },
    );
}

export function gatewaysRoutes(deps: GatewaysDeps) {
  return new Elysia({ name: "gateways-all" }).use(registryRoutes(deps)).use(endpointRoutes(deps));
}
