// A hosted agent signs in to a remote MCP gateway and calls its tools, end to end (docs/mcp.md,
// "Remote gateways"): the MCP SDK's own client with its OAuth support (StreamableHTTPClientTransport
// and an OAuthClientProvider, unmodified) against the service listening on a port, and a person in
// Chromium (./chromium.ts). The client meets the gateway's 401, discovers its protected resource
// metadata (RFC 9728) and warden's authorization server metadata (RFC 8414), registers (RFC 7591)
// and sends the browser to the authorization endpoint with PKCE; the person logs in and clicks
// Allow on the consent page; the client exchanges the code, lists the tools, makes an allowed call
// (forwarded under the gateway's secret, never the client's token), a denied one (never forwarded),
// and one held for approval that waits while an approver approves it in the console.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { linkToken } from "../helpers/mail.ts";
import { uniqueEmail } from "../helpers/service.ts";
import { planSetAsApproved } from "../helpers/sql.ts";
import { devCertificate } from "../security/helpers.ts";
import { upstreamServer } from "../mcp/fixtures/upstream.ts";
import { chromiumAvailable, insecure, openConsoleInBrowser, testChromiumInstalled, type ConsoleInBrowser } from "./chromium.ts";

const STEP_MS = 90_000;
const PASSWORD = "a quiet harbour at dawn";
const SHARED_SECRET = "files-upstream-secret-7";
const POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "writes_need_approval", effect: "require_approval", reason: "writes_need_approval", when: { actions: ["mcp.files.write_file"] }, approval: { quorum: 1 } },
    { id: "echo_ok", effect: "allow", reason: "echo_is_harmless", when: { actions: ["mcp.files.echo"] } },
  ],
};

/** The agent's side of OAuth, as a desktop or hosted client keeps it: in memory, the browser sent to the authorization URL by the test. */
class Agent implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;
  constructor(readonly redirectUrl: string) {}
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "Remote Test Agent", redirect_uris: [this.redirectUrl], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error("no code verifier saved");
    return this.verifier;
  }
}

interface ToolResult {
  content: { text: string }[];
  isError?: boolean;
  _meta?: { warden?: Record<string, string> };
}

testChromiumInstalled();

describe.skipIf(!chromiumAvailable)("a hosted agent through a remote gateway, signed in by a person in the browser", () => {
  let run: ConsoleInBrowser;
  let upstream: ReturnType<typeof Bun.serve>;
  let redirects: ReturnType<typeof Bun.serve>;
  const callbacks: URL[] = [];
  const seen: { authorization: string | null; body: string }[] = [];
  const people = { owner: uniqueEmail("remote-owner"), alice: uniqueEmail("remote-alice") };
  let ownerToken = "";
  let gatewayUrl = "";
  let agent: Agent;
  let client: Client;
  // The service's certificate is the development one: the agent's requests accept it, as a
  // client configured for it would.
  const agentFetch = (url: string | URL, init?: RequestInit) => fetch(url, { ...init, ...insecure });

  const request = async (method: string, path: string, token?: string, json?: unknown) => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (json !== undefined) headers["content-type"] = "application/json";
    const reply = await fetch(run.origin + path, { ...insecure, method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
    return { status: reply.status, body: (await reply.json()) as any };
  };
  const heading = (page: Page, name: string | RegExp) => page.getByRole("heading", { level: 1, name }).waitFor();
  const logIn = async (page: Page, email: string) => {
    await heading(page, "Log in");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
  };
  const transport = () => new StreamableHTTPClientTransport(new URL(gatewayUrl), { authProvider: agent, fetch: agentFetch });
  const callTool = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 80_000 })) as unknown as ToolResult;

  beforeAll(async () => {
    const { cert, key } = await devCertificate();
    // The upstream MCP server (the SDK's, over HTTPS on the loopback), noting what reaches it.
    upstream = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      tls: { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") },
      async fetch(req) {
        seen.push({ authorization: req.headers.get("authorization"), body: req.method === "POST" ? await req.clone().text() : "" });
        if (req.method === "GET") return new Response(null, { status: 405, headers: { allow: "POST, DELETE" } });
        const server = upstreamServer(() => {});
        const t = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        await server.connect(t);
        return t.handleRequest(req);
      },
    });
    // The agent's redirect URI: a loopback listener, as a desktop agent has.
    redirects = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (r) => (callbacks.push(new URL(r.url)), new Response("You can close this tab.")) });
    run = await openConsoleInBrowser("remote-agent", { webhookAllowPrivate: true, extraCaCerts: cert });

    const signup = await request("POST", "/auth/signup", undefined, { email: people.owner, password: PASSWORD });
    expect(signup.status).toBe(201);
    ownerToken = signup.body.token;
    await planSetAsApproved(run.server.service.deps.db, signup.body.tenant_id, "pro");
    expect((await request("PUT", "/customer/policy", ownerToken, { document: POLICY })).status).toBe(200);
    expect((await request("POST", "/customer/members/invitations", ownerToken, { email: people.alice, role: "approver" })).status).toBe(201);
    const [mail] = await run.inbox.waitFor(people.alice);
    expect((await request("POST", "/auth/invitations/accept", undefined, { token: linkToken(mail, "/console/invitation", run.origin), password: PASSWORD })).status).toBe(200);
    const made = await request("POST", "/customer/mcp/gateways", ownerToken, { name: "files", upstream_url: `https://127.0.0.1:${upstream.port}/mcp`, upstream_auth: "shared", secret: SHARED_SECRET });
    expect(made.status).toBe(201);
    gatewayUrl = made.body.url;
    agent = new Agent(`http://127.0.0.1:${redirects.port}/callback`);
  }, 120_000);

  afterAll(async () => {
    await client?.close().catch(() => {});
    upstream?.stop(true);
    redirects?.stop(true);
    await run?.close();
  }, 60_000);

  test(
    "discovery, registration, the person's consent in the browser, the code for tokens, then tools/list",
    async () => {
      // Unauthenticated, the client meets the 401 and does everything up to sending the person to sign in.
      client = new Client({ name: "remote-test-agent", version: "1.0.0" });
      const first = transport();
      await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
      expect(agent.info?.client_id).toMatch(/^cli_/);
      const authorization = agent.authorizationUrl!;
      expect(authorization.origin + authorization.pathname).toBe(`${run.origin}/oauth/authorize`);
      expect(authorization.searchParams.get("code_challenge_method")).toBe("S256");
      expect(authorization.searchParams.get("resource")).toBe(gatewayUrl);

      const page = run.page;
      await page.goto(authorization.href);
      await logIn(page, people.owner);
      await heading(page, "Sign in an agent");
      await run.seen('[data-testid="consent-client"]', "Remote Test Agent");
      await run.seen('[data-testid="consent-gateway"]', "files");
      await run.shot("consent");
      await page.getByRole("button", { name: "Allow" }).click();
      await page.waitForURL((url) => url.origin === `http://127.0.0.1:${redirects.port}`);
      const back = callbacks.findLast((u) => u.pathname === "/callback")!;
      expect(back.searchParams.get("iss")).toBe(run.origin);
      await first.finishAuth(back.searchParams.get("code")!);
      expect(agent.saved?.access_token).toMatch(/^wat_/);
      expect(agent.saved?.refresh_token).toMatch(/^wrt_/);

      await client.connect(transport());
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(["delete_everything", "echo", "pay", "write_file"]);
    },
    STEP_MS,
  );

  test(
    "an allowed call goes upstream under the gateway's secret and names its receipt, which names the person, the agent and the gateway",
    async () => {
      const before = seen.length;
      const result = await callTool("echo", { text: "hello" });
      expect(result.isError).toBeFalsy();
      expect(result.content[0]!.text).toBe("echo: hello");
      const receiptId = result._meta!.warden!.receipt_id!;
      expect(receiptId).toMatch(/^rcpt_/);
      const forwarded = seen.slice(before).filter((s) => s.body.includes('"tools/call"'));
      expect(forwarded.map((s) => s.authorization)).toEqual([`Bearer ${SHARED_SECRET}`]);
      // Nothing the agent holds ever reaches the upstream.
      for (const s of seen) {
        expect(s.authorization ?? "").not.toContain(agent.saved!.access_token);
        expect(s.body).not.toContain(agent.saved!.access_token);
      }
      const receipt = await request("GET", `/customer/receipts/${receiptId}`, ownerToken);
      expect(receipt.status).toBe(200);
      expect(receipt.body.receipt.payload.principal).toMatchObject({ client_id: agent.info!.client_id, gateway: "files", role: "owner" });
    },
    STEP_MS,
  );

  test(
    "a denied call is an error naming the reason, and nothing goes upstream",
    async () => {
      const before = seen.length;
      const result = await callTool("delete_everything", {});
      expect(result.isError).toBe(true);
      expect(result.content.map((c) => c.text).join(" ")).toContain("no_rule_matched");
      expect(seen.slice(before).filter((s) => s.body.includes("delete_everything"))).toEqual([]);
    },
    STEP_MS,
  );

  test(
    "a call held for approval waits while an approver approves it in the console, then goes upstream",
    async () => {
      const held = callTool("write_file", { path: "notes/q3.txt", content: "numbers" });
      // The approver, in the browser: the inbox, the request as the agent asked it, Approve.
      const page = run.page;
      // The owner's session (from the consent) ends first: Log out, then the approver logs in.
      await page.goto(`${run.origin}/console/dashboard`);
      await heading(page, "Dashboard");
      await page.getByRole("button", { name: "Log out" }).click();
      await logIn(page, people.alice);
      await page.waitForURL(/\/console\/dashboard$/);
      await page.goto(`${run.origin}/console/approvals`);
      await heading(page, "Approvals");
      const row = page.getByTestId("pending-table").locator("tr", { hasText: "mcp.files.write_file" });
      await row.first().waitFor();
      await row.first().getByRole("link", { name: "mcp.files.write_file" }).click();
      await heading(page, /Approval/);
      await page.getByTestId("hash-checked").waitFor();
      await run.shot("approval");
      await page.getByRole("button", { name: "Approve", exact: true }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Approve request" }).click();
      // Approved, and at once executed by the gateway that was waiting for it.
      await page.getByTestId("approval-status").filter({ hasText: /approved|executed/ }).waitFor();

      const result = await held;
      expect(result.isError).toBeFalsy();
      expect(result.content[0]!.text).toBe("wrote notes/q3.txt");
      expect(run.cspViolations).toEqual([]);
      expect(run.pageErrors).toEqual([]);
    },
    STEP_MS,
  );
});
