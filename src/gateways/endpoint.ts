// The remote gateway's endpoint, {PUBLIC_URL}/mcp/{gateway_id} (docs/mcp.md, "Remote gateways"):
// MCP Streamable HTTP towards the agent, an OAuth resource server (RFC 9728, RFC 6750; the MCP
// authorization specification). A request needs a bearer token bound to exactly this gateway's
// URL; every tools/call is decided here (./decide-call.ts) before it goes upstream; every other
// message, and the GET and DELETE of the transport, passes through to the upstream unchanged,
// under the gateway's own credentials (none, its shared secret, or the calling member's own
// secret), never the client's token. Tokens are never logged.
import { isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Queryable } from "../db/index.ts";
import type { GatewayCaller } from "../decide/policy.ts";
import { AppError } from "../http/errors.ts";
import { noteCaller, requestId } from "../http/request-state.ts";
import type { KeyAuthenticator } from "../keys/authenticate.ts";
import type { Logger } from "../log.ts";
import { receiptNote, type CallRecord } from "../mcp/calls.ts";
import type { AccessGrant, AccessTokens } from "../oauth/access.ts";
import { findGateway, gatewayResource, GATEWAY_SCOPE, type GatewayResource } from "../oauth/resources.ts";
import { parseTargetUrl, TargetRefused, type WebhookTargets } from "../webhooks/target.ts";
import { decideCall, type CallDeciding } from "./decide-call.ts";
import { sealContext } from "./manage.ts";

export interface EndpointDeps extends CallDeciding {
  db: Queryable & CallDeciding["db"];
  log: Logger;
  keys: KeyAuthenticator;
  accessTokens: AccessTokens;
  gatewaySecrets: SecretBox;
  webhookTargets: WebhookTargets;
  publicUrl: string;
  /** How long a call held for approval waits for people before it is refused naming the approval. */
  approvalWaitMs: number;
  /** The certificate authorities upstreams are trusted by: the runtime's, plus NODE_EXTRA_CA_CERTS (as for webhooks). */
  upstreamCa?: string[];
}

/** RFC 9728: the metadata of a resource whose URL has a path is at the well-known prefix plus that path. */
export function metadataUrl(publicUrl: string, gatewayId: string): string {
  const origin = new URL(publicUrl).origin;
  return `${origin}/.well-known/oauth-protected-resource${new URL(gatewayResource(publicUrl, gatewayId)).pathname}`;
}

/** The gateway the URL names when it serves: unknown, deleted and disabled gateways are not found. */
export async function servingGateway(db: Queryable, gatewayId: string): Promise<GatewayResource> {
  return serving(await findGateway(db, gatewayId));
}

function serving(gateway: GatewayResource | null): GatewayResource {
  if (!gateway || gateway.status === "deleted") throw new AppError("not_found", "No such gateway.");
  if (gateway.status !== "active") throw new AppError("not_found", "This gateway is disabled.");
  return gateway;
}

/** RFC 9728 section 5.1 and RFC 6750 section 3: the challenge that tells a client where to sign in. */
function challenge(deps: Pick<EndpointDeps, "publicUrl">, gatewayId: string, error?: "invalid_token" | "insufficient_scope"): string {
  const parts = [`resource_metadata="${metadataUrl(deps.publicUrl, gatewayId)}"`, `scope="${GATEWAY_SCOPE}"`];
  if (error) parts.unshift(`error="${error}"`);
  return `Bearer ${parts.join(", ")}`;
}

/**
 * The grant of the request's bearer token for the gateway the URL names, and that gateway: 401
 * with the challenge when there is no token or it is not a live token for exactly this URL
 * (another gateway's, another tenant's, expired, revoked), whether or not such a gateway exists (a
 * stranger learns nothing); 403 when it lacks the gateway's scope; then 404 when the gateway does
 * not serve (unknown, disabled, deleted).
 */
export async function authorize(deps: Pick<EndpointDeps, "publicUrl" | "accessTokens" | "db">, request: Request, gatewayId: string): Promise<{ gateway: GatewayResource; grant: AccessGrant }> {
  const header = request.headers.get("authorization")?.trim() ?? "";
  const token = /^Bearer\s+([\x21-\x7e]+)$/i.exec(header)?.[1];
  const named = encodeURIComponent(gatewayId);
  if (!token) {
    throw new AppError("unauthorized", "Sign in: send an OAuth access token for this gateway as Authorization: Bearer (the WWW-Authenticate header names where).", {
      headers: { "www-authenticate": challenge(deps, named) },
    });
  }
  const resource = gatewayResource(deps.publicUrl, named);
  const grant = await deps.accessTokens.verify(token, resource);
  const invalid = () =>
    new AppError("unauthorized", "The access token is not valid for this gateway (expired, revoked, or issued for another resource).", {
      headers: { "www-authenticate": challenge(deps, named, "invalid_token") },
    });
  // The grant must name this very gateway, whatever the token store said.
  if (!grant || grant.resource !== resource || grant.gateway_id !== gatewayId) throw invalid();
  if (!grant.scope.split(" ").includes(GATEWAY_SCOPE)) {
    throw new AppError("insufficient_scope", `The access token lacks the scope ${GATEWAY_SCOPE}.`, {
      headers: { "www-authenticate": challenge(deps, named, "insufficient_scope") },
    });
  }
  // The gateway as read with the grant (OAuthTokens reads both at once), else read here.
  const gateway = serving(grant.gateway ?? (await findGateway(deps.db, gatewayId)));
  // ... and of this gateway's tenant.
  if (grant.tenant_id !== gateway.tenant_id) throw invalid();
  checkOrigin(deps.publicUrl, request, grant);
  return { gateway, grant };
}

/**
 * The MCP transport's rule against DNS rebinding: a request that names an Origin is served only
 * when it is the service's own or the agent's (the origin of the redirect URI the person
 * consented for, where a browser-based agent runs); 403 otherwise. Without an Origin (an agent's
 * server, a desktop client) the token alone decides.
 */
export function checkOrigin(publicUrl: string, request: Request, grant: Pick<AccessGrant, "redirect_uri">): void {
  const origin = request.headers.get("origin");
  if (origin === null) return;
  const agentOrigin = URL.canParse(grant.redirect_uri) ? new URL(grant.redirect_uri).origin : null;
  if (origin === new URL(publicUrl).origin || (agentOrigin !== null && agentOrigin !== "null" && origin === agentOrigin)) return;
  throw new AppError("origin_not_allowed", "This request's Origin is neither this service's nor the agent's (its redirect URI's): refused, as the MCP transport asks against DNS rebinding.");
}

/** Headers of the agent's request the upstream needs (the transport's own); never Authorization or cookies. */
const PASSED_REQUEST_HEADERS = ["accept", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id"];
/** Headers of the upstream's answer the agent needs. */
const PASSED_RESPONSE_HEADERS = ["content-type", "mcp-session-id", "cache-control"];

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const rpcError = (id: JSONRPCRequest["id"] | null, code: number, message: string) => json(200, { jsonrpc: "2.0", id, error: { code, message } });

/** What a request through the gateway carries: the gateway, the grant, and how the upstream is reached. */
interface Passage {
  gateway: GatewayResource;
  grant: AccessGrant;
  upstreamHeaders: Headers;
  /** The gateway key's secret, sealed (decisions are recorded under that key). */
  keySecretSealed: string | null;
}

/** POST, GET or DELETE /mcp/{gateway_id}, authorized: decided where it is a tools/call, else passed through. */
export async function serveMcp(deps: EndpointDeps, request: Request, gateway: GatewayResource, grant: AccessGrant, parsed: unknown): Promise<Response> {
  noteCaller(request, gateway.tenant_id, undefined);
  // Read with the token (OAuthTokens.verify()); read here for a token store that did not.
  const credentials = gateway.sealed
    ? { key_secret_sealed: gateway.sealed.key, secret_sealed: gateway.sealed.shared, member_secret_sealed: gateway.sealed.member }
    : (await deps.db.one("gateways/credentials", [gateway.tenant_id, gateway.gateway_id, grant.member_id]))!;
  const upstreamHeaders = new Headers();
  for (const name of PASSED_REQUEST_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) upstreamHeaders.set(name, value);
  }
  const sealed =
    gateway.upstream_auth === "shared" ? { sealed: credentials.secret_sealed, context: sealContext.shared(gateway.gateway_id) }
    : gateway.upstream_auth === "per_member" ? { sealed: credentials.member_secret_sealed, context: sealContext.member(gateway.gateway_id, grant.member_id) }
    : undefined;
  let body: string | undefined;
  let messages: JSONRPCMessage[] = [];
  if (request.method === "POST") {
    // Parsed by the app (JSON, at most 64 KiB); forwarded as JSON again.
    if (parsed === null || parsed === undefined) return json(400, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: the body holds no JSON-RPC message." } });
    body = JSON.stringify(parsed);
    // A batch could carry a tools/call past the decision: the current revision has no batches.
    if (Array.isArray(parsed)) return json(400, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: batches are not accepted; send one message per request." } });
    messages = [parsed as JSONRPCMessage];
  }
  if (sealed) {
    const secret = sealed.sealed === null ? null : await deps.gatewaySecrets.open(sealed.sealed, sealed.context).catch(() => null);
    if (secret === null) {
      const message = gateway.upstream_auth === "per_member"
        ? `This gateway calls its upstream with each person's own secret, and you have not stored one: set it in the console (MCP gateways) or with PUT /customer/mcp/gateways/${gateway.gateway_id}/secret.`
        : "The gateway's secret for its upstream cannot be read; ask an admin to register the gateway again.";
      const first = messages[0];
      if (first && isJSONRPCRequest(first)) return rpcError(first.id, -32001, message);
      return json(409, { jsonrpc: "2.0", id: null, error: { code: -32001, message } });
    }
    upstreamHeaders.set("authorization", `Bearer ${secret}`);
  }
  const passage: Passage = { gateway, grant, upstreamHeaders, keySecretSealed: credentials.key_secret_sealed };
  const message = messages[0];
  if (message && "method" in message && message.method === "tools/call") {
    // A tools/call sent as a notification asks for no answer: nothing is decided, nothing forwarded.
    if (!isJSONRPCRequest(message)) return new Response(null, { status: 202 });
    return decideAndForward(deps, request, passage, message, body!);
  }
  return forward(deps, request, passage, body);
}

async function decideAndForward(deps: EndpointDeps, request: Request, passage: Passage, call: JSONRPCRequest, body: string): Promise<Response> {
  const { gateway, grant } = passage;
  const via: GatewayCaller = { account_id: grant.account_id, member_id: grant.member_id, role: grant.role, client_id: grant.client_id, gateway_id: gateway.gateway_id, gateway: gateway.name };
  let verdict;
  try {
    const sealedKey = passage.keySecretSealed;
    const keySecret = sealedKey === null ? null : await deps.gatewaySecrets.open(sealedKey, sealContext.key(gateway.gateway_id)).catch(() => null);
    if (keySecret === null) throw new Error("the gateway's key cannot be read");
    const principal = await deps.keys.authenticate(keySecret);
    verdict = await decideCall(deps, { principal, via, request: call, requestId: requestId(request), waitMs: deps.approvalWaitMs, signal: request.signal });
  } catch (err) {
    // Fail closed: whatever went wrong, the call does not go upstream.
    const why = err instanceof AppError ? `${err.code}: ${err.message}` : "the gateway failed to decide";
    if (!(err instanceof AppError)) deps.log.error("mcp_gateway_decide_failed", { gateway_id: gateway.gateway_id, request_id: requestId(request), error: String((err as Error)?.message ?? err) });
    verdict = { forward: false as const, record: { action: "", arguments_sha256: "", decision: "UNDECIDED" as const, error: why }, text: `Refused by warden: ${why}; the call was not forwarded (the gateway fails closed).` };
  }
  if (!verdict.forward) {
    deps.log.info("mcp_call_refused", { gateway_id: gateway.gateway_id, request_id: requestId(request), ...verdict.record });
    return json(200, { jsonrpc: "2.0", id: call.id, result: { content: [{ type: "text", text: verdict.text }], isError: true, _meta: { warden: verdict.record } } });
  }
  deps.log.info("mcp_call_forwarded", { gateway_id: gateway.gateway_id, request_id: requestId(request), ...verdict.record });
  const upstream = await forward(deps, request, passage, body);
  return withRecord(upstream, call.id, verdict.record);
}

/** The request to the upstream, its answer to the agent: status, the transport's headers and the body as it streams. */
async function forward(deps: EndpointDeps, request: Request, passage: Passage, body: string | undefined): Promise<Response> {
  const url = passage.gateway.upstream_url;
  try {
    // The address rules hold at every call, not only at registration.
    if (!deps.webhookTargets.allowPrivate) await deps.webhookTargets.resolve(parseTargetUrl(url), 5000);
  } catch (err) {
    if (err instanceof TargetRefused) return upstreamFailure(request, body, `the upstream's address is refused (${err.message})`);
    throw err;
  }
  let answer: Response;
  try {
    const init = { method: request.method, headers: passage.upstreamHeaders, body, redirect: "manual", signal: request.signal, ...(deps.upstreamCa && { tls: { ca: deps.upstreamCa } }) };
    answer = await fetch(url, init as RequestInit);
  } catch (err) {
    return upstreamFailure(request, body, `the upstream cannot be reached (${(err as Error).message})`);
  }
  // The upstream refusing the gateway's credentials is no challenge for the agent's client to answer.
  if (answer.status === 401 || answer.status === 403) {
    await answer.body?.cancel();
    return upstreamFailure(request, body, `the upstream refused the gateway's credentials (HTTP ${answer.status})`);
  }
  const headers = new Headers();
  for (const name of PASSED_RESPONSE_HEADERS) {
    const value = answer.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  return new Response(answer.body, { status: answer.status, headers });
}

/** The upstream failed: a JSON-RPC error answering the request, or 502-like silence for the rest. */
function upstreamFailure(request: Request, body: string | undefined, why: string): Response {
  let id: JSONRPCRequest["id"] | null = null;
  try {
    const parsed = body === undefined ? undefined : JSON.parse(body);
    if (parsed && isJSONRPCRequest(parsed)) id = parsed.id;
  } catch {
    // not a request: nothing to answer
  }
  if (request.method === "POST" && id !== null) return rpcError(id, -32002, `The gateway could not forward: ${why}.`);
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32002, message: `The gateway could not forward: ${why}.` } }), { status: 502, headers: { "content-type": "application/json" } });
}

/** The result of the forwarded call with its receipts added (a note in content, the record in _meta.warden), JSON or SSE. */
async function withRecord(upstream: Response, id: JSONRPCRequest["id"], record: CallRecord): Promise<Response> {
  const add = (message: JSONRPCMessage): JSONRPCMessage => {
    if (!isJSONRPCResultResponse(message) || message.id !== id) return message;
    const result = message.result as { content?: unknown[]; _meta?: Record<string, unknown> };
    const note = { type: "text", text: receiptNote(record) };
    return { ...message, result: { ...result, content: [...(Array.isArray(result.content) ? result.content : []), note], _meta: { ...result._meta, warden: record } } };
  };
  const type = upstream.headers.get("content-type") ?? "";
  if (type.includes("application/json")) {
    const text = await upstream.text();
    let parsed: JSONRPCMessage;
    try {
      parsed = JSON.parse(text) as JSONRPCMessage;
    } catch {
      return new Response(text, { status: upstream.status, headers: upstream.headers });
    }
    return new Response(JSON.stringify(add(parsed)), { status: upstream.status, headers: upstream.headers });
  }
  if (!type.includes("text/event-stream") || !upstream.body) return upstream;
  return new Response(upstream.body.pipeThrough(rewriteEvents(add)), { status: upstream.status, headers: upstream.headers });
}

/** An SSE stream with each event's JSON data passed through `edit` (events split on blank lines). */
function rewriteEvents(edit: (message: JSONRPCMessage) => JSONRPCMessage): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = "";
  const emit = (event: string, out: TransformStreamDefaultController<Uint8Array>) => {
    const lines = event.split(/\r?\n/);
    const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, ""));
    let rewritten = event;
    if (data.length > 0) {
      try {
        const edited = JSON.stringify(edit(JSON.parse(data.join("\n")) as JSONRPCMessage));
        rewritten = [...lines.filter((l) => !l.startsWith("data:")), `data: ${edited}`].join("\n");
      } catch {
        // not JSON: as it came
      }
    }
    out.enqueue(encoder.encode(`${rewritten}\n\n`));
  };
  return new TransformStream({
    transform(chunk, out) {
      pending += decoder.decode(chunk, { stream: true });
      let at: number;
      while ((at = pending.search(/\r?\n\r?\n/)) >= 0) {
        const sep = /\r?\n\r?\n/.exec(pending.slice(at))![0].length;
        emit(pending.slice(0, at), out);
        pending = pending.slice(at + sep);
      }
    },
    flush(out) {
      pending += decoder.decode();
      if (pending.trim() !== "") emit(pending, out);
    },
  });
}
