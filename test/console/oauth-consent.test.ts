// An agent's sign-in through a real browser (docs/api.md, "OAuth for agents"): the authorization
// endpoint hands the browser to the console, which asks the person to log in and brings them back
// to the consent page; Allow sends the browser to the agent's redirect URI with a code that the
// token endpoint exchanges. The Agents page then lists the grant and revokes it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { newId } from "../../src/ids.ts";
import { gatewayResource } from "../../src/oauth/resources.ts";
import { pkce } from "../helpers/oauth.ts";
import { uniqueEmail } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";
import { chromiumAvailable, insecure, openConsoleInBrowser, testChromiumInstalled, type ConsoleInBrowser } from "./chromium.ts";

const PASSWORD = "a quiet harbour at dawn";

testChromiumInstalled();

describe.skipIf(!chromiumAvailable)("an agent signed in through the console", () => {
  let run: ConsoleInBrowser;
  let agent: Server<undefined>;
  const callbacks: URL[] = [];

  beforeAll(async () => {
    run = await openConsoleInBrowser("oauth");
    // The agent's redirect URI: a loopback listener, as a desktop agent has.
    agent = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (r) => (callbacks.push(new URL(r.url)), new Response("You can close this tab.")) });
  }, 120_000);

  afterAll(async () => {
    agent?.stop(true);
    await run?.close();
  });

  const api = async (method: string, path: string, json?: unknown, form?: Record<string, string>, token?: string) => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (json !== undefined) headers["content-type"] = "application/json";
    if (form) headers["content-type"] = "application/x-www-form-urlencoded";
    const body = json !== undefined ? JSON.stringify(json) : form ? new URLSearchParams(form).toString() : undefined;
    const reply = await fetch(run.origin + path, { ...insecure, method, headers, body });
    return { status: reply.status, body: (await reply.json()) as any };
  };

  test("log in, consent, code, token; then revoke on the Agents page", async () => {
    const email = uniqueEmail("oauth-owner");
    const signup = await api("POST", "/auth/signup", { email, password: PASSWORD });
    expect(signup.status).toBe(201);
    const { db, accessTokens, config } = run.server.service.deps;
    const gatewayId = newId("gw_");
    await testQuery(db, "oauth_gateway_add", [gatewayId, signup.body.tenant_id, "crm"]);
    await testQuery(db, "oauth_gateway_route_add", [gatewayId, signup.body.tenant_id]);
    const resource = gatewayResource(config.publicUrl, gatewayId);
    const redirect = `http://127.0.0.1:${agent.port}/callback`;
    const client = await api("POST", "/oauth/register", { client_name: "Browser Test Agent", redirect_uris: [redirect] });
    expect(client.status).toBe(201);
    const { verifier, challenge } = pkce();
    const query = new URLSearchParams({ response_type: "code", client_id: client.body.client_id, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: "S256", state: "browser-state", resource, scope: "mcp" });

    const page = run.page;
    await page.goto(`${run.origin}/oauth/authorize?${query}`);
    await run.heading("Log in");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await run.heading("Sign in an agent");
    await run.seen('[data-testid="consent-client"]', "Browser Test Agent");
    await run.seen('[data-testid="consent-gateway"]', "crm");
    await run.shot("consent");
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((url) => url.origin === `http://127.0.0.1:${agent.port}`);
    // The browser also asks the agent for /favicon.ico: the redirect is the request to /callback.
    const back = callbacks.findLast((u) => u.pathname === "/callback")!;
    expect(back.searchParams.get("state")).toBe("browser-state");
    const code = back.searchParams.get("code")!;
    const token = await api("POST", "/oauth/token", undefined, { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: redirect, client_id: client.body.client_id });
    expect(token.status).toBe(200);
    expect((await accessTokens.verify(token.body.access_token, resource))?.client_name).toBe("Browser Test Agent");

    await page.goto(`${run.origin}/console/agents`);
    await run.heading("Agents");
    await run.seen('[data-testid="agents-table"]', "Browser Test Agent");
    await page.getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await run.seen('[data-testid="agents-table"]', "revoked");
    expect(await accessTokens.verify(token.body.access_token, resource)).toBeNull();
    expect(run.cspViolations).toEqual([]);
    expect(run.pageErrors).toEqual([]);
  }, 120_000);
});
