// What a remote MCP gateway adds to a tool call (docs/mcp.md, "Remote gateways"): one caller, one
// call at a time, the same tools/call sent straight to an upstream MCP server and through warden's
// gateway in front of it, alternating, beside a protect of the same tenant. The gateway's part is
// the difference of the p50s; the target is the protect's own p50 plus 2 ms. A person's token is
// obtained as an agent would obtain it: registration, authorization with PKCE, the person's consent
// (the console's call, with their session), the code for tokens.
//
//   bun scripts/bench/remote-mcp.ts     # alone: a service of its own on the embedded database
//   (npm run bench runs it per database, in the same run as the other scenarios)
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { loadTls } from "../../src/http/tls.ts";
import { s256 } from "../../src/oauth/tokens.ts";

const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;
/** The gateway's tenant's policy: the tool the calls use is allowed. */
const POLICY = { default_effect: "deny", default_reason: "no_rule_matched", rules: [{ id: "echo", effect: "allow", reason: "harmless", when: { actions: ["mcp.bench.echo"] } }] };

export interface BenchUpstream {
  url: string;
  /** Its certificate: the service trusts it with NODE_EXTRA_CA_CERTS. */
  cert: string;
  stop(): void;
}

/** An MCP server over HTTPS on the loopback with one tool, echo, answering JSON (stateless: any request alone). */
export async function startBenchUpstream(): Promise<BenchUpstream> {
  const dir = mkdtempSync(join(tmpdir(), "warden-bench-upstream-"));
  await loadTls({ dataDir: dir, log: () => {} });
  const cert = join(dir, "tls", "dev-cert.pem");
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: readFileSync(cert, "utf8"), key: readFileSync(join(dir, "tls", "dev-key.pem"), "utf8") },
    async fetch(request) {
      if (request.method !== "POST") return new Response(null, { status: 405, headers: { allow: "POST" } });
      const mcp = new Server({ name: "bench upstream", version: "1.0.0" }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } }] }));
      mcp.setRequestHandler(CallToolRequestSchema, (r) => ({ content: [{ type: "text", text: `echo: ${String(r.params.arguments?.text)}` }] }));
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await mcp.connect(transport);
      return transport.handleRequest(request);
    },
  });
  return { url: `https://127.0.0.1:${server.port}/mcp`, cert, stop: () => server.stop(true) };
}

async function json(url: string, init: RequestInit): Promise<any> {
  const res = await fetch(url, { ...insecure, ...init });
  const body = await res.json();
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${url}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/** Publishes POLICY, registers the gateway and signs an agent in through OAuth for the account's person; the gateway's URL and the access token. */
async function gatewayWithToken(serviceUrl: string, account: { token: string }, upstream: BenchUpstream): Promise<{ url: string; accessToken: string }> {
  const session = { authorization: `Bearer ${account.token}`, "content-type": "application/json" };
  await json(`${serviceUrl}/customer/policy`, { method: "PUT", headers: session, body: JSON.stringify({ document: POLICY }) });
  const gateway = await json(`${serviceUrl}/customer/mcp/gateways`, { method: "POST", headers: session, body: JSON.stringify({ name: "bench", upstream_url: upstream.url, upstream_auth: "none" }) });
  const redirect = "http://127.0.0.1:9/callback";
  const client = await json(`${serviceUrl}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_name: "bench agent", redirect_uris: [redirect] }) });
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  const challenge = s256(verifier);
  const request = { response_type: "code", client_id: client.client_id, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: "S256", state: "bench", scope: "mcp", resource: gateway.url };
  // The consent page's call, as the console makes it from its own origin.
  const consent = await json(`${serviceUrl}/oauth/consent`, { method: "POST", headers: { ...session, origin: new URL(serviceUrl).origin, "sec-fetch-site": "same-origin" }, body: JSON.stringify({ ...request, approve: true }) });
  const code = new URL(consent.redirect_to).searchParams.get("code")!;
  const form = new URLSearchParams({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: redirect, client_id: client.client_id });
  const tokens = await json(`${serviceUrl}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form.toString() });
  return { url: gateway.url, accessToken: tokens.access_token };
}

export interface RemoteMcpResult {
  database: string;
  calls: number;
  direct_p50_ms: number;
  gateway_p50_ms: number;
  protect_p50_ms: number;
  /** gateway_p50_ms - direct_p50_ms: what the gateway adds. */
  added_ms: number;
  /** protect_p50_ms + 2: the most it may add. */
  target_ms: number;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round2 = (x: number) => Math.round(x * 100) / 100;

/** The three one-caller latencies, alternating call by call (direct, gateway, protect), after a warm-up. */
export async function remoteMcpLatency(serviceUrl: string, account: { token: string; api_key: string }, upstream: BenchUpstream, database: string, calls = 300): Promise<RemoteMcpResult> {
  const { url, accessToken } = await gatewayWithToken(serviceUrl, account, upstream);
  const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
  let id = 0;
  const call = async (target: string, headers: Record<string, string>) => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name: "echo", arguments: { text: `call ${id}` } } });
    const t0 = performance.now();
    const res = await fetch(target, { ...insecure, method: "POST", headers, body });
    const text = await res.text();
    const ms = performance.now() - t0;
    if (!res.ok || !text.includes(`echo: call ${id}`)) throw new Error(`tools/call on ${target}: ${res.status} ${text.slice(0, 300)}`);
    return ms;
  };
  const protect = async () => {
    const t0 = performance.now();
    const res = await fetch(`${serviceUrl}/v1/protect`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": account.api_key }, body: JSON.stringify({ action: "document.read", resource: `docs/${++id}` }) });
    await res.text();
    if (!res.ok) throw new Error(`protect: ${res.status}`);
    return performance.now() - t0;
  };
  const gatewayHeaders = { ...mcpHeaders, authorization: `Bearer ${accessToken}` };
  for (let i = 0; i < 30; i++) {
    await call(upstream.url, mcpHeaders);
    await call(url, gatewayHeaders);
    await protect();
  }
  const direct: number[] = [];
  const through: number[] = [];
  const protects: number[] = [];
  for (let i = 0; i < calls; i++) {
    direct.push(await call(upstream.url, mcpHeaders));
    through.push(await call(url, gatewayHeaders));
    protects.push(await protect());
  }
  const result = { database, calls, direct_p50_ms: round2(p50(direct)), gateway_p50_ms: round2(p50(through)), protect_p50_ms: round2(p50(protects)), added_ms: 0, target_ms: 0 };
  result.added_ms = round2(result.gateway_p50_ms - result.direct_p50_ms);
  result.target_ms = round2(result.protect_p50_ms + 2);
  return result;
}

/** The report's line for one database. */
export function remoteMcpLine(r: RemoteMcpResult): string {
  return (
    `Remote MCP gateway (${r.database}, one caller, ${r.calls} calls each, alternating): a tools/call straight to the upstream p50 ${r.direct_p50_ms} ms, through the gateway ${r.gateway_p50_ms} ms: ` +
    `it adds ${r.added_ms} ms (a protect alone: p50 ${r.protect_p50_ms} ms; the target, at most the protect's own time plus 2 ms: ${r.target_ms} ms, ${r.added_ms <= r.target_ms ? "met" : "NOT met"}).`
  );
}

if (import.meta.main) {
  const { startWithTenants, stopService, toolDatabase } = await import("./service.ts");
  const upstream = await startBenchUpstream();
  const database = await toolDatabase("warden_remote_mcp");
  const root = join(import.meta.dir, "..", "..");
  const env = { DATA_DIR: mkdtempSync(join(tmpdir(), "warden-bench-remote-")), LOG_LEVEL: "warn", WEBHOOK_ALLOW_PRIVATE: "1", NODE_EXTRA_CA_CERTS: upstream.cert, ...(database.url ? { DATABASE_URL: database.url } : {}) };
  const started = await startWithTenants(root, env, { tenants: 1, name: "remote" });
  try {
    console.log(remoteMcpLine(await remoteMcpLatency(started.service.url, started.accounts[0]!, upstream, database.url ? "postgres" : "embedded")));
  } finally {
    await stopService(started.service);
    upstream.stop();
    await database.drop();
  }
}
