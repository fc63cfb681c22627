// Remote MCP gateways (docs/api.md, "Remote MCP gateways"; docs/mcp.md, "Remote gateways"): the
// registry through HTTP as a client would, and the endpoint end to end: a real upstream (the SDK's
// server over Streamable HTTP, HTTPS on the loopback), the SDK's Client with a bearer token, the
// service listening on a port. Tokens are the authorization server's own (src/oauth/tokens.ts),
// minted for a grant without the browser flow (test/oauth/ tests that flow); the checks a token
// store cannot be made to fail (a grant of another tenant, a missing scope) are tested on
// authorize() with a stand-in.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import type { AccessGrant, AccessTokens } from "../../src/oauth/access.ts";
import { authorize } from "../../src/gateways/endpoint.ts";
import { grantWithTokens } from "../helpers/oauth.ts";
import { listen, type Listener } from "../../src/runtime.ts";
import { bearer, setPlan, setUsage } from "../helpers/customer.ts";
import { addMember, type Member } from "../helpers/members.ts";
import { BASE, call, expectErrorShape, signup, subjectOf, testConfig, testService, toReply } from "../helpers/service.ts";
import { devCertificate } from "../security/helpers.ts";
import { upstreamServer } from "../mcp/fixtures/upstream.ts";

const POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "writes_need_approval", effect: "require_approval", reason: "writes_need_approval", when: { actions: ["mcp.fix.write_file"] }, approval: { quorum: 1 } },
    { id: "echo_ok", effect: "allow", reason: "echo_is_harmless", when: { actions: ["mcp.fix.echo"] } },
    { id: "viewers_do_not_pay", effect: "deny", reason: "viewers_do_not_pay", when: { actions: ["mcp.fix.pay"], where: { "principal.role": { eq: "viewer" } } } },
    { id: "payments", effect: "allow", reason: "payment_by_member", when: { actions: ["mcp.fix.pay"] } },
  ],
};

/** The service's PUBLIC_URL: the gateways' resource URLs and the authorization server. */
const publicUrl = () => service.deps.config.publicUrl;

const SHARED_SECRET = "upstream-shared-secret-1";
const APPROVAL_WAIT_MS = 8_000;

type Tenant = Awaited<ReturnType<typeof signup>>;
let owner: Tenant;
let other: Tenant;
let approver: Member;
let viewer: Member;
let developer: Member;
let service: Service;
let front: Listener;
let upstream: ReturnType<typeof Bun.serve>;
let upstreamUrl: string;
const seen: { authorization: string | null; method: string; body: string; session: string | null }[] = [];
const logLines: string[] = [];

/** An access token of `memberId` for the gateway, through a grant to an agent (revoked with DELETE /customer/oauth/grants/{grant_id}). */
const grantIds = new Map<string, string>();
async function issue(gatewayId: string, memberId: string): Promise<string> {
  const gw = { gatewayId, tenantId: owner.tenantId, name: "", resource: `${publicUrl()}/mcp/${gatewayId}` };
  const tokens = await grantWithTokens(gw, memberId, { clientId: CLIENT_ID, clientName: "Example Agent", service });
  grantIds.set(tokens.access_token, tokens.grant_id);
  return tokens.access_token;
}

const CLIENT_ID = "https://agent.example/client.json";

const mine = (body: Record<string, unknown>, token = owner.token) => call("POST", "/customer/mcp/gateways", { json: body, headers: bearer(token), service });

async function register(name: string, upstream_auth: "none" | "shared" | "per_member" = "shared"): Promise<string> {
  const made = await mine({ name, upstream_url: upstreamUrl, upstream_auth, ...(upstream_auth === "shared" && { secret: SHARED_SECRET }) });
  expect(made.status).toBe(201);
  return made.body.gateway_id;
}

const clients: Client[] = [];
async function connect(gatewayId: string, token: string): Promise<Client> {
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${front.port}/mcp/${gatewayId}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/**
 * A raw JSON-RPC POST to the endpoint through the app, as a client would send it. Its refusals
 * (401, 403, 404) are checked against /openapi.json; its MCP answers are the upstream's, JSON or an
 * event stream, and are read as they come.
 */
async function post(gatewayId: string, message: unknown, headers: Record<string, string> = {}) {
  const all = { accept: "application/json, text/event-stream", "content-type": "application/json", ...headers };
  const raw = await toReply(await service.handle(new Request(`${BASE}/mcp/${gatewayId}`, { method: "POST", headers: all, body: JSON.stringify(message) })));
  if (raw.status >= 401 && raw.status <= 404) return call("POST", `/mcp/${gatewayId}`, { json: message, headers: all, service });
  return raw;
}

interface ToolResult {
  content: { text: string }[];
  isError?: boolean;
  _meta: { warden: Record<string, string> & { reasons?: string[] } };
}

/** A tools/call through the SDK's client, its result as the gateway shapes it. */
async function callTool(client: Client, name: string, args: Record<string, unknown>, timeout?: number): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, timeout ? { timeout } : undefined)) as unknown as ToolResult;
}

/** The pending approval of the write_file call for `path`, once it is there. */
async function pendingApproval(path: string): Promise<{ approval_id: string; action_hash: string }> {
  for (let i = 0; i < 100; i++) {
    const list = await call("GET", "/customer/approvals?status=pending", { headers: bearer(owner.token), service });
    for (const a of list.body.approvals) {
      const detail = await call("GET", `/customer/approvals/${a.approval_id}`, { headers: bearer(owner.token), service });
      if (detail.body.input?.context?.path === path) return detail.body;
    }
    await Bun.sleep(50);
  }
  throw new Error(`no pending approval for ${path}`);
}

const TOOLS_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };

beforeAll(async () => {
  const { db } = await testService();
  const { cert, key } = await devCertificate();
  // The upstream, stateless over HTTPS: a server and a transport per request; it notes what it was sent.
  upstream = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") },
    async fetch(request) {
      const body = request.method === "POST" ? await request.clone().text() : "";
      seen.push({ authorization: request.headers.get("authorization"), method: request.method, body, session: request.headers.get("mcp-session-id") });
      // No stream for server-to-client messages (the transport allows 405 for GET).
      if (request.method === "GET") return new Response(null, { status: 405, headers: { allow: "POST, DELETE" } });
      const server = upstreamServer(() => {});
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      await server.connect(transport);
      return transport.handleRequest(request);
    },
  });
  upstreamUrl = `https://127.0.0.1:${upstream.port}/mcp`;
  service = await createService(testConfig({ webhookAllowPrivate: true, extraCaCerts: cert }), {
    db,
    log: createLogger("info", (line) => logLines.push(line)),
    gatewayApprovalWaitMs: APPROVAL_WAIT_MS,
  });
  // Plain HTTP on the loopback, presented to the service as the HTTPS it asks for.
  front = listen({ port: 0, hostname: "127.0.0.1", fetch: (request) => service.handle(new Request(request.url.replace(/^http:\/\/[^/]+/, BASE), request)) });
  owner = await signup();
  other = await signup();
  await setPlan(owner.tenantId, "pro");
  approver = await addMember(owner.token, "approver");
  viewer = await addMember(owner.token, "viewer");
  developer = await addMember(owner.token, "developer");
  const published = await call("PUT", "/customer/policy", { json: { document: POLICY }, headers: bearer(owner.token) });
  expect(published.status).toBe(200);
}, 60_000);

afterAll(async () => {
  if (process.env.GW_DEBUG) for (const l of logLines) if (l.includes("unexpected_error") || l.includes("decide_failed")) console.log(l.slice(0, 1500));
  await Promise.allSettled(clients.map((c) => c.close()));
  await front?.stop(true);
  upstream?.stop(true);
  await service?.close();
});

describe("the registry", () => {
  test("an admin registers a gateway: its url, no secret shown; listed and read by any member", async () => {
    const made = await mine({ name: "reg-one", upstream_url: upstreamUrl, upstream_auth: "shared", secret: SHARED_SECRET });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ ok: true, name: "reg-one", upstream_url: upstreamUrl, upstream_auth: "shared", status: "active", created_by: owner.memberId });
    expect(made.body.url).toBe(`${publicUrl()}/mcp/${made.body.gateway_id}`);
    expect(made.text).not.toContain(SHARED_SECRET);
    const listed = await call("GET", "/customer/mcp/gateways", { headers: bearer(viewer.token), service });
    expect(listed.status).toBe(200);
    expect(listed.body.gateways.map((g: { gateway_id: string }) => g.gateway_id)).toContain(made.body.gateway_id);
    expect(listed.text).not.toContain(SHARED_SECRET);
    const one = await call("GET", `/customer/mcp/gateways/${made.body.gateway_id}`, { headers: bearer(viewer.token), service });
    expect(one.body.url).toBe(made.body.url);
    // Sealed at rest: the stored row holds no clear secret.
    const { db } = await testService();
    const stored = await db.one("gateways/credentials", [owner.tenantId, made.body.gateway_id, owner.memberId]);
    expect(stored!.secret_sealed).not.toContain(SHARED_SECRET);
    expect(await service.deps.gatewaySecrets.open(stored!.secret_sealed!, `${made.body.gateway_id}:shared`)).toBe(SHARED_SECRET);
  });

  test("only admins and owners register, disable and delete (403 forbidden_role)", async () => {
    const refused = await mine({ name: "by-dev", upstream_url: upstreamUrl, upstream_auth: "none" }, developer.token);
    expectErrorShape(refused, 403, "forbidden_role");
    const id = await register("roles-one", "none");
    expectErrorShape(await call("PATCH", `/customer/mcp/gateways/${id}`, { json: { enabled: false }, headers: bearer(developer.token), service }), 403, "forbidden_role");
    expectErrorShape(await call("DELETE", `/customer/mcp/gateways/${id}`, { headers: bearer(viewer.token), service }), 403, "forbidden_role");
    expectErrorShape(await call("GET", "/customer/mcp/gateways", { service }), 401, "unauthorized");
  });

  test("the address rules of webhooks: https only; private addresses only where the operator allows them", async () => {
    const plain = await mine({ name: "plain", upstream_url: upstreamUrl.replace("https:", "http:"), upstream_auth: "none" });
    expectErrorShape(plain, 400, "invalid_request");
    expect(plain.body.message).toContain("https");
    // The shared service does not allow private targets.
    const loopback = await call("POST", "/customer/mcp/gateways", { json: { name: "private", upstream_url: upstreamUrl, upstream_auth: "none" }, headers: bearer(owner.token) });
    expectErrorShape(loopback, 400, "invalid_request");
    expect(loopback.body.message).toContain("body/upstream_url");
  });

  test("a name is unique among live gateways; shared needs a secret and only shared takes one; bad names refused", async () => {
    await register("dup-name", "none");
    expectErrorShape(await mine({ name: "dup-name", upstream_url: upstreamUrl, upstream_auth: "none" }), 409, "name_taken");
    expectErrorShape(await mine({ name: "no-secret", upstream_url: upstreamUrl, upstream_auth: "shared" }), 400, "invalid_request");
    expectErrorShape(await mine({ name: "extra-secret", upstream_url: upstreamUrl, upstream_auth: "none", secret: "x" }), 400, "invalid_request");
    expectErrorShape(await mine({ name: "Bad.Name", upstream_url: upstreamUrl, upstream_auth: "none" }), 400, "invalid_request");
  });

  test("another tenant's gateway is not found", async () => {
    const id = await register("theirs", "none");
    expectErrorShape(await call("GET", `/customer/mcp/gateways/${id}`, { headers: bearer(other.token), service }), 404, "not_found");
    expectErrorShape(await call("DELETE", `/customer/mcp/gateways/${id}`, { headers: bearer(other.token), service }), 404, "not_found");
    expectErrorShape(await call("PATCH", `/customer/mcp/gateways/${id}`, { json: { enabled: false }, headers: bearer(other.token), service }), 404, "not_found");
  });

  test("per-member secrets: each member their own, sealed, never shown; only for per_member gateways", async () => {
    const id = await register("per-member", "per_member");
    const set = await call("PUT", `/customer/mcp/gateways/${id}/secret`, { json: { secret: "viewer-own-secret" }, headers: bearer(viewer.token), service });
    expect(set.status).toBe(200);
    expect(set.text).not.toContain("viewer-own-secret");
    const asViewer = await call("GET", `/customer/mcp/gateways/${id}`, { headers: bearer(viewer.token), service });
    expect(asViewer.body.member_secret_set).toBe(true);
    expect(asViewer.text).not.toContain("viewer-own-secret");
    const asOwner = await call("GET", `/customer/mcp/gateways/${id}`, { headers: bearer(owner.token), service });
    expect(asOwner.body.member_secret_set).toBe(false);
    const erased = await call("DELETE", `/customer/mcp/gateways/${id}/secret`, { headers: bearer(viewer.token), service });
    expect(erased.body).toEqual({ ok: true, deleted: true });
    const shared = await register("not-per-member", "shared");
    expectErrorShape(await call("PUT", `/customer/mcp/gateways/${shared}/secret`, { json: { secret: "x" }, headers: bearer(viewer.token), service }), 400, "invalid_request");
  });

  test("create, disable, enable, delete and secrets are events of the audit trail", async () => {
    const id = await register("audited", "per_member");
    await call("PATCH", `/customer/mcp/gateways/${id}`, { json: { enabled: false }, headers: bearer(owner.token), service });
    await call("PATCH", `/customer/mcp/gateways/${id}`, { json: { enabled: true }, headers: bearer(owner.token), service });
    await call("PUT", `/customer/mcp/gateways/${id}/secret`, { json: { secret: "s3cret-value" }, headers: bearer(owner.token), service });
    await call("DELETE", `/customer/mcp/gateways/${id}`, { headers: bearer(owner.token), service });
    const audit = await call("GET", "/customer/audit?event=gateway.*&limit=100", { headers: bearer(owner.token), service });
    expect(audit.status).toBe(200);
    const mineEvents = audit.body.events.filter((e: { target: { gateway_id?: string } }) => e.target?.gateway_id === id).map((e: { event: string }) => e.event);
    expect(mineEvents.sort()).toEqual(["gateway.created", "gateway.deleted", "gateway.disabled", "gateway.enabled", "gateway.secret_set"].sort());
    expect(audit.text).not.toContain("s3cret-value");
  });
});

describe("the endpoint's authorization (RFC 9728, RFC 6750)", () => {
  let id: string;
  beforeAll(async () => {
    id = await register("authz", "none");
  });

  test("the protected resource metadata names the resource and warden as its authorization server", async () => {
    const prm = await call("GET", `/.well-known/oauth-protected-resource/mcp/${id}`, { service });
    expect(prm.status).toBe(200);
    expect(prm.body).toMatchObject({ resource: `${publicUrl()}/mcp/${id}`, authorization_servers: [publicUrl()], scopes_supported: ["mcp"] });
    expectErrorShape(await call("GET", "/.well-known/oauth-protected-resource/mcp/gw_AAAAAAAAAAAAAAAAAAAAAA", { service }), 404, "not_found");
  });

  test("an unknown gateway: 401 without a valid token (a stranger learns nothing), like any other", async () => {
    expectErrorShape(await post("gw_AAAAAAAAAAAAAAAAAAAAAA", TOOLS_LIST), 401, "unauthorized");
    expectErrorShape(await post("gw_AAAAAAAAAAAAAAAAAAAAAA", TOOLS_LIST, bearer("tok_nobody")), 401, "unauthorized");
  });

  test("no token: 401 with the challenge naming the metadata, no error attribute", async () => {
    const reply = await post(id, TOOLS_LIST);
    expectErrorShape(reply, 401, "unauthorized");
    const challenge = reply.headers.get("www-authenticate")!;
    expect(challenge).toStartWith("Bearer ");
    expect(challenge).toContain(`resource_metadata="${publicUrl()}/.well-known/oauth-protected-resource/mcp/${id}"`);
    expect(challenge).not.toContain("error=");
  });

  test("an unknown token, a token for another gateway, another tenant's, a revoked one: 401 invalid_token", async () => {
    const unknown = await post(id, TOOLS_LIST, bearer("tok_nobody"));
    expectErrorShape(unknown, 401, "unauthorized");
    expect(unknown.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const elsewhere = await register("authz-other", "none");
    const forOther = await issue(elsewhere, owner.memberId);
    expectErrorShape(await post(id, TOOLS_LIST, bearer(forOther)), 401, "unauthorized");
    const good = await issue(id, owner.memberId);
    expect((await post(id, TOOLS_LIST, bearer(good))).status).toBe(200);
    // The person revokes the agent's grant (the console's Agents page).
    const revokedGrant = await call("DELETE", `/customer/oauth/grants/${grantIds.get(good)}`, { headers: bearer(owner.token), service });
    expect(revokedGrant.status).toBe(200);
    const revoked = await post(id, TOOLS_LIST, bearer(good));
    expectErrorShape(revoked, 401, "unauthorized");
    expect(revoked.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  test("another tenant's token: 401; a grant the token store gives for another tenant, or without the scope mcp, is refused all the same", async () => {
    const theirs = await call("POST", "/customer/mcp/gateways", { json: { name: "theirs-too", upstream_url: "https://93.184.215.14/mcp", upstream_auth: "none" }, headers: bearer(other.token) });
    const theirGateway = { gatewayId: theirs.body.gateway_id, tenantId: other.tenantId, name: "theirs-too", resource: `${publicUrl()}/mcp/${theirs.body.gateway_id}` };
    const theirToken = (await grantWithTokens(theirGateway, other.memberId, { service })).access_token;
    expectErrorShape(await post(id, TOOLS_LIST, bearer(theirToken)), 401, "unauthorized");
    // What a token store that went wrong would answer: a grant for this URL, but of another tenant, or narrower.
    const grant: AccessGrant = { grant_id: "grt_x", tenant_id: other.tenantId, account_id: "acct_x", member_id: other.memberId, role: "owner", client_id: CLIENT_ID, client_name: "x", redirect_uri: "https://agent.example/callback", gateway_id: id, resource: `${publicUrl()}/mcp/${id}`, scope: "mcp", expires_at: new Date(Date.now() + 60_000).toISOString() };
    const store = (g: AccessGrant): AccessTokens => ({ verify: async () => g });
    const request = new Request(`${BASE}/mcp/${id}`, { headers: bearer("wat_anything") });
    const deps = (g: AccessGrant) => ({ publicUrl: publicUrl(), accessTokens: store(g), db: service.deps.db });
    const foreign = await authorize(deps(grant), request, id).catch((e) => e);
    expect([foreign.code, foreign.options.headers["www-authenticate"]]).toEqual(["unauthorized", expect.stringContaining('error="invalid_token"')]);
    const narrow = await authorize(deps({ ...grant, tenant_id: owner.tenantId, scope: "profile" }), request, id).catch((e) => e);
    expect([narrow.code, narrow.status, narrow.options.headers["www-authenticate"]]).toEqual(["insufficient_scope", 403, expect.stringContaining('error="insufficient_scope"')]);
    const fine = await authorize(deps({ ...grant, tenant_id: owner.tenantId }), request, id);
    expect(fine.gateway.gateway_id).toBe(id);
  });

  test("a disabled gateway serves nothing (its tokens do not hold: 401; its metadata 404), and serves again once enabled; a deleted one is gone", async () => {
    const gw = await register("authz-toggle", "none");
    const token = await issue(gw, owner.memberId);
    await call("PATCH", `/customer/mcp/gateways/${gw}`, { json: { enabled: false }, headers: bearer(owner.token), service });
    expectErrorShape(await post(gw, TOOLS_LIST, bearer(token)), 401, "unauthorized");
    expectErrorShape(await post(gw, TOOLS_LIST), 401, "unauthorized");
    expectErrorShape(await call("GET", `/.well-known/oauth-protected-resource/mcp/${gw}`, { service }), 404, "not_found");
    await call("PATCH", `/customer/mcp/gateways/${gw}`, { json: { enabled: true }, headers: bearer(owner.token), service });
    expect((await post(gw, TOOLS_LIST, bearer(token))).status).toBe(200);
    await call("DELETE", `/customer/mcp/gateways/${gw}`, { headers: bearer(owner.token), service });
    expectErrorShape(await post(gw, TOOLS_LIST, bearer(token)), 401, "unauthorized");
    expectErrorShape(await call("GET", `/.well-known/oauth-protected-resource/mcp/${gw}`, { service }), 404, "not_found");
  });

  test("an Origin that is neither the service's nor the agent's is refused (403 origin_not_allowed, the MCP transport's DNS-rebinding rule); those two are served", async () => {
    const token = await issue(id, owner.memberId);
    const refused = await post(id, TOOLS_LIST, { ...bearer(token), origin: "http://evil.example.com" });
    expectErrorShape(refused, 403, "origin_not_allowed");
    // The agent's own origin (its redirect URI's, https://agent.example/callback), and the service's.
    expect((await post(id, TOOLS_LIST, { ...bearer(token), origin: "https://agent.example" })).status).toBe(200);
    expect((await post(id, TOOLS_LIST, { ...bearer(token), origin: new URL(publicUrl()).origin })).status).toBe(200);
    // No Origin (a server-side agent): the token alone decides.
    expect((await post(id, TOOLS_LIST, bearer(token))).status).toBe(200);
  });

  test("a batch is refused: it could carry a tools/call past the decision", async () => {
    const token = await issue(id, owner.memberId);
    const before = seen.length;
    const reply = await post(id, [{ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "delete_everything", arguments: {} } }], bearer(token));
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe(-32600);
    expect(seen.length).toBe(before);
  });
});

describe("calls through the gateway (the SDK's client and server)", () => {
  let id: string;
  let ownerToken: string;
  beforeAll(async () => {
    // Named "fix": the policy's actions are mcp.fix.<tool>.
    id = await register("fix", "shared");
    ownerToken = await issue(id, owner.memberId);
  });

  test("tools/list passes through; an allowed call is executed, forwarded with the gateway's secret, and names its receipts", async () => {
    const client = await connect(id, ownerToken);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(["delete_everything", "echo", "pay", "write_file"]);
    const before = seen.length;
    const result = await callTool(client, "echo", { text: "hi" });
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toBe("echo: hi");
    const record = result._meta.warden;
    expect(record).toMatchObject({ action: "mcp.fix.echo", decision: "ALLOWED" });
    expect(record.receipt_id).toStartWith("rcpt_");
    expect(record.execute_receipt_id).toStartWith("rcpt_");
    expect(result.content.at(-1)!.text).toContain(record.receipt_id!);
    // The upstream saw the gateway's own secret, never the client's token.
    const upstreamSaw = seen.slice(before).filter((s) => s.body.includes("tools/call"));
    expect(upstreamSaw.length).toBe(1);
    expect(upstreamSaw[0]!.authorization).toBe(`Bearer ${SHARED_SECRET}`);
    for (const s of seen) expect(s.authorization ?? "").not.toContain(ownerToken);
    // No token in any log line.
    expect(logLines.some((l) => l.includes(ownerToken))).toBe(false);

    // The receipt names the person, the agent and the gateway; verify decides it again.
    const receipt = await call("GET", `/customer/receipts/${record.receipt_id}`, { headers: bearer(owner.token), service });
    expect(receipt.status).toBe(200);
    const payload = receipt.body.receipt.payload;
    expect(payload.principal).toMatchObject({ account_id: subjectOf(owner.token).account_id, member_id: owner.memberId, role: "owner", client_id: CLIENT_ID, gateway_id: id, gateway: "fix" });
    expect(payload.input.context.arguments_sha256).toBe(record.arguments_sha256);
    expect(payload.input.context.text).toBe("hi");
    const verified = await call("POST", "/v1/verify", { json: { receipt: receipt.body.receipt }, headers: { "x-api-key": owner.apiKey }, service });
    expect(verified.body.checks.decision).toBe(true);
    expect(verified.body.verified).toBe(true);
    // The execute, stored in the same call to the log, names the protect and is the next link of the chain.
    const executed = await call("GET", `/customer/receipts/${record.execute_receipt_id}`, { headers: bearer(owner.token), service });
    expect(executed.body.receipt).toMatchObject({ kind: "execute", protect_receipt_id: record.receipt_id, seq: receipt.body.receipt.seq + 1, prev_hash: receipt.body.receipt.chain_hash });
    expect((await call("POST", "/v1/verify", { json: { receipt: executed.body.receipt }, headers: { "x-api-key": owner.apiKey }, service })).body.verified).toBe(true);
  });

  test("an execute the log refuses (the day's executes used up) refuses the call: the protect is stored, nothing goes upstream", async () => {
    const fresh = await signup();
    await setPlan(fresh.tenantId, "pro");
    expect((await call("PUT", "/customer/policy", { json: { document: POLICY }, headers: bearer(fresh.token), service })).status).toBe(200);
    const made = await call("POST", "/customer/mcp/gateways", { json: { name: "fix", upstream_url: upstreamUrl, upstream_auth: "none" }, headers: bearer(fresh.token), service });
    expect(made.status).toBe(201);
    const gw = { gatewayId: made.body.gateway_id, tenantId: fresh.tenantId, name: "fix", resource: `${publicUrl()}/mcp/${made.body.gateway_id}` };
    const token = (await grantWithTokens(gw, fresh.memberId, { clientId: CLIENT_ID, service })).access_token;
    await setUsage(fresh.tenantId, 0, 500);
    const before = seen.length;
    const result = await callTool(await connect(gw.gatewayId, token), "echo", { text: "over" });
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toContain("quota_exceeded");
    expect(result.content[0]!.text).toContain("fails closed");
    expect(seen.slice(before).some((s) => s.body.includes("tools/call"))).toBe(false);
    const receipts = await call("GET", "/customer/receipts?limit=50", { headers: bearer(fresh.token), service });
    const decisions = receipts.body.receipts.filter((r: { kind: string }) => r.kind === "protect" || r.kind === "execute");
    expect(decisions.map((r: { kind: string; decision: string }) => [r.kind, r.decision])).toEqual([["protect", "ALLOWED"]]);
  });

  test("a denied call is an isError result naming the reason and the receipt; nothing goes upstream", async () => {
    const client = await connect(id, ownerToken);
    const before = seen.length;
    const result = await callTool(client, "delete_everything", {});
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toContain("no_rule_matched");
    expect(result.content[0]!.text).toContain(result._meta.warden.receipt_id!);
    expect(seen.slice(before).some((s) => s.body.includes("tools/call"))).toBe(false);
  });

  test("a policy rule on principal.role: a viewer's agent may not pay, the owner's may; verify agrees", async () => {
    const viewerToken = await issue(id, viewer.memberId);
    const asViewer = await callTool(await connect(id, viewerToken), "pay", { amount: 5 });
    expect(asViewer.isError).toBe(true);
    expect(asViewer._meta.warden.reasons).toEqual(["viewers_do_not_pay"]);
    const asOwner = await callTool(await connect(id, ownerToken), "pay", { amount: 5 });
    expect(asOwner.isError).toBeFalsy();
    const receipt = await call("GET", `/customer/receipts/${asViewer._meta.warden.receipt_id}`, { headers: bearer(owner.token), service });
    const verified = await call("POST", "/v1/verify", { json: { receipt: receipt.body.receipt }, headers: { "x-api-key": owner.apiKey }, service });
    expect(verified.body.verified).toBe(true);
  });

  test("a call held for approval waits while another member approves, then goes upstream", async () => {
    const client = await connect(id, ownerToken);
    const path = `/tmp/approved-${crypto.randomUUID()}`;
    const pending = callTool(client, "write_file", { path, content: "x" }, 30_000);
    let approval: { approval_id: string; action_hash: string } | undefined;
    for (let i = 0; i < 100 && !approval; i++) {
      const list = await call("GET", "/customer/approvals?status=pending", { headers: bearer(approver.token), service });
      for (const a of list.body.approvals) {
        const detail = await call("GET", `/customer/approvals/${a.approval_id}`, { headers: bearer(approver.token), service });
        if (detail.body.input?.context?.path === path) approval = detail.body;
      }
      if (!approval) await Bun.sleep(50);
    }
    expect(approval).toBeDefined();
    // The approval shows who asked, through what: its protect receipt's principal.
    const detail = await call("GET", `/customer/approvals/${approval!.approval_id}`, { headers: bearer(approver.token), service });
    expect(JSON.stringify(detail.body)).toContain('"gateway":"fix"');
    const voted = await call("POST", `/customer/approvals/${approval!.approval_id}/votes`, { json: { vote: "approve", action_hash: approval!.action_hash }, headers: bearer(approver.token), service });
    expect(voted.status).toBe(200);
    const result = await pending;
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toBe(`wrote ${path}`);
    expect(result._meta.warden).toMatchObject({ decision: "ALLOWED", approval_id: approval!.approval_id, approval_status: "approved" });
    expect(result._meta.warden.outcome_receipt_id).toStartWith("rcpt_");
  }, 40_000);

  test("the person whose agent asked may not approve it (self_approval); the gateway's maker may", async () => {
    const approverToken = await issue(id, approver.memberId);
    const client = await connect(id, approverToken);
    const path = `/tmp/self-${crypto.randomUUID()}`;
    const pending = callTool(client, "write_file", { path, content: "x" }, 30_000);
    const approval = await pendingApproval(path);
    const own = await call("POST", `/customer/approvals/${approval.approval_id}/votes`, { json: { vote: "approve", action_hash: approval.action_hash }, headers: bearer(approver.token), service });
    expectErrorShape(own, 403, "self_approval");
    const byOwner = await call("POST", `/customer/approvals/${approval.approval_id}/votes`, { json: { vote: "approve", action_hash: approval.action_hash }, headers: bearer(owner.token), service });
    expect(byOwner.status).toBe(200);
    const result = await pending;
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toBe(`wrote ${path}`);
  }, 40_000);

  test("a call nobody approves in time is refused naming the approval, and not forwarded", async () => {
    const client = await connect(id, ownerToken);
    const before = seen.length;
    const result = await callTool(client, "write_file", { path: `/tmp/late-${crypto.randomUUID()}`, content: "x" }, 30_000);
    expect(result.isError).toBe(true);
    expect(result._meta.warden.approval_status).toBe("pending");
    expect(result.content[0]!.text).toContain(result._meta.warden.approval_id!);
    expect(seen.slice(before).some((s) => s.body.includes("tools/call"))).toBe(false);
  }, 40_000);

  test("warden failing to decide fails closed: the gateway's key revoked, the call is refused", async () => {
    const gw = await register("fails-closed", "none");
    const token = await issue(gw, owner.memberId);
    const keys = await call("GET", "/customer/keys", { headers: bearer(owner.token), service });
    const key = keys.body.keys.find((k: { metadata?: Record<string, string> }) => k.metadata?.mcp_gateway === gw);
    expect(key).toBeDefined();
    expect((await call("POST", `/customer/keys/${key.key_id}/revoke`, { headers: bearer(owner.token), service })).status).toBe(200);
    const before = seen.length;
    const result = await callTool(await connect(gw, token), "echo", { text: "x" });
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toContain("fails closed");
    expect(seen.slice(before).some((s) => s.body.includes("tools/call"))).toBe(false);
  });

  test("GET and DELETE of the transport need the token too, and pass through under the gateway's secret", async () => {
    for (const method of ["GET", "DELETE"]) {
      const refused = await call(method, `/mcp/${id}`, { headers: { accept: "text/event-stream" }, service });
      expectErrorShape(refused, 401, "unauthorized");
      const before = seen.length;
      const reply = await service.handle(new Request(`${BASE}/mcp/${id}`, { method, headers: { accept: "text/event-stream", "mcp-session-id": "s-1", ...bearer(ownerToken) } }));
      await reply.body?.cancel();
      // The upstream's own answer: 405 for the stream it does not offer; 200 for the session's end.
      expect(reply.status).toBe(method === "GET" ? 405 : 200);
      // Only this session's requests: an SDK client of an earlier test may still open its own GET stream.
      const ours = seen.slice(before).filter((s) => s.session === "s-1");
      expect(ours.map((s) => [s.method, s.authorization])).toEqual([[method, `Bearer ${SHARED_SECRET}`]]);
    }
  });

  test("per-member upstream auth: each person's own secret goes upstream; without one, an error says how to set it", async () => {
    const gw = await register("fix-pm", "per_member");
    const token = await issue(gw, approver.memberId);
    const missing = await post(gw, TOOLS_LIST, bearer(token));
    expect(missing.body.error.code).toBe(-32001);
    expect(missing.body.error.message).toContain("secret");
    await call("PUT", `/customer/mcp/gateways/${gw}/secret`, { json: { secret: "approver-own-secret" }, headers: bearer(approver.token), service });
    const before = seen.length;
    const listed = await post(gw, TOOLS_LIST, bearer(token));
    expect(listed.status).toBe(200);
    expect(seen.slice(before).map((s) => s.authorization)).toEqual(["Bearer approver-own-secret"]);
  });

  test("a member who leaves takes their own upstream secrets with them: erased, not only unused", async () => {
    const gw = await register("fix-leaver", "per_member");
    const leaver = await addMember(owner.token, "developer");
    expect((await call("PUT", `/customer/mcp/gateways/${gw}/secret`, { json: { secret: "leaver-own-secret" }, headers: bearer(leaver.token), service })).status).toBe(200);
    const { db } = await testService();
    const stored = () => db.one("gateways/credentials", [owner.tenantId, gw, leaver.memberId]);
    expect((await stored())!.member_secret_sealed).not.toBeNull();
    expect((await call("DELETE", `/customer/members/${leaver.memberId}`, { headers: bearer(owner.token), service })).status).toBe(200);
    expect((await stored())!.member_secret_sealed).toBeNull();
  });
});
