// The authorization server through HTTP as an agent and a person would use it (docs/api.md, "OAuth
// for agents"): metadata, registration, the authorization endpoint, consent with the person's
// session, the token endpoint, revocation, and the grants' list.
import { describe, expect, test } from "bun:test";
import { bearer } from "../helpers/accounts.ts";
import { addMember } from "../helpers/members.ts";
import { addGateway, handoffTarget, pkce, type TestGateway } from "../helpers/oauth.ts";
import { BASE, call, expectErrorShape, logLines, signup, testService, type Reply } from "../helpers/service.ts";

const REDIRECT = "https://agent.example/callback";
/** The service's PUBLIC_URL: the issuer, and the origin of gateway URLs. */
const ISSUER = (await testService()).service.deps.config.publicUrl;
const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

async function register(redirectUris: string[] = [REDIRECT], name = "Test Agent"): Promise<Reply> {
  return call("POST", "/oauth/register", { json: { client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] } });
}

function authorizeQuery(clientId: string, gw: TestGateway, challenge: string, extra: Record<string, string> = {}): Record<string, string> {
  return { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state: "st-123", resource: gw.resource, scope: "mcp", ...extra };
}

const qs = (q: Record<string, string>) => new URLSearchParams(q).toString();

async function world() {
  const owner = await signup();
  const gw = await addGateway(owner.tenantId);
  const client = (await register()).body;
  return { owner, gw, client };
}

/** The person consents through the console's calls; answers the code from the redirect. */
async function consentFor(token: string, q: Record<string, string>, headers: Record<string, string> = {}) {
  const reply = await call("POST", "/oauth/consent", { json: { ...q, approve: true }, headers: { ...bearer(token), origin: BASE, ...headers } });
  return reply;
}

async function codeFor(token: string, q: Record<string, string>): Promise<string> {
  const reply = await consentFor(token, q);
  expect(reply.status).toBe(200);
  const to = new URL(reply.body.redirect_to);
  expect(to.origin + to.pathname).toBe(REDIRECT);
  expect(to.searchParams.get("state")).toBe("st-123");
  expect(to.searchParams.get("iss")).toBe(ISSUER);
  return to.searchParams.get("code")!;
}

describe("metadata", () => {
  test("RFC 8414: issuer, endpoints, S256 only, public clients, metadata documents", async () => {
    const reply = await call("GET", "/.well-known/oauth-authorization-server");
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/oauth/authorize`,
      token_endpoint: `${ISSUER}/oauth/token`,
      registration_endpoint: `${ISSUER}/oauth/register`,
      revocation_endpoint: `${ISSUER}/oauth/revoke`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      client_id_metadata_document_supported: true,
    });
  });
});

describe("browser-based agents (CORS)", () => {
  test("the metadata and the token endpoints answer a preflight and any origin; the consent does not", async () => {
    const { service } = await testService();
    for (const path of ["/.well-known/oauth-authorization-server", "/oauth/register", "/oauth/token", "/oauth/revoke"]) {
      const reply = await service.handle(new Request(`${BASE}${path}`, { method: "OPTIONS", headers: { origin: "https://inspector.example", "access-control-request-method": "POST" } }));
      expect(reply.status).toBe(204);
      expect(reply.headers.get("access-control-allow-origin")).toBe("*");
    }
    expect((await call("GET", "/.well-known/oauth-authorization-server")).headers.get("access-control-allow-origin")).toBe("*");
    const consent = await service.handle(new Request(`${BASE}/oauth/consent`, { method: "OPTIONS", headers: { origin: "https://evil.example" } }));
    expect(consent.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("POST /oauth/register", () => {
  test("registers a public client with https and loopback http redirect URIs", async () => {
    const reply = await register([REDIRECT, "http://127.0.0.1:33418/cb", "http://localhost/cb"]);
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ client_name: "Test Agent", token_endpoint_auth_method: "none", redirect_uris: [REDIRECT, "http://127.0.0.1:33418/cb", "http://localhost/cb"] });
    expect(reply.body.client_id).toMatch(/^cli_[0-9A-Za-z]{22}$/);
    expect(reply.body.client_secret).toBeUndefined();
    expect(reply.headers.get("cache-control")).toBe("no-store");
  });

  test("refuses redirect URIs that are plain http elsewhere, carry a fragment, or are not URLs", async () => {
    for (const bad of ["http://agent.example/cb", "https://agent.example/cb#x", "not a url", "javascript:alert(1)"]) {
      const reply = await register([bad]);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe("invalid_redirect_uri");
    }
    const none = await call("POST", "/oauth/register", { json: { client_name: "x", redirect_uris: [] } });
    expect(none.status).toBe(400);
    const secret = await call("POST", "/oauth/register", { json: { redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_basic" } });
    expect(secret.status).toBe(400);
  });
});

describe("GET /oauth/authorize", () => {
  test("a good request goes to the console's consent page with the same parameters", async () => {
    const { gw, client } = await world();
    // With what some clients add: OIDC's prompt, and parameters warden does not know.
    const q = authorizeQuery(client.client_id, gw, pkce().challenge, { prompt: "consent", nonce: "n-1" });
    const reply = await call("GET", `/oauth/authorize?${qs(q)}`);
    const to = handoffTarget(reply);
    expect(to.pathname).toBe("/console/consent");
    expect(Object.fromEntries(to.searchParams)).toEqual(q);
  });

  test("an unknown client or a redirect URI it did not register is shown, never redirected to", async () => {
    const { gw, client } = await world();
    const { challenge } = pkce();
    for (const q of [
      authorizeQuery("cli_0000000000000000000000", gw, challenge),
      authorizeQuery(client.client_id, gw, challenge, { redirect_uri: "https://evil.example/callback" }),
      authorizeQuery(client.client_id, gw, challenge, { redirect_uri: `${REDIRECT}/more` }),
      authorizeQuery("https://evil.example", gw, challenge),
    ]) {
      const reply = await call("GET", `/oauth/authorize?${qs(q)}`);
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.headers.get("location")).toBeNull();
    }
  });

  test("PKCE missing or plain, no resource, another service's resource, a wrong response_type: back to the client with error", async () => {
    const { gw, client } = await world();
    const { challenge } = pkce();
    const cases: [Record<string, string>, string][] = [
      [{ code_challenge: "" }, "invalid_request"],
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ code_challenge_method: "" }, "invalid_request"],
      [{ resource: "" }, "invalid_target"],
      [{ resource: "https://elsewhere.example/mcp/gw_0000000000000000000000" }, "invalid_target"],
      [{ resource: `${ISSUER}/mcp/gw_0000000000000000000000` }, "invalid_target"],
      [{ response_type: "token" }, "unsupported_response_type"],
    ];
    for (const [change, error] of cases) {
      const q = authorizeQuery(client.client_id, gw, challenge, change);
      for (const [k, v] of Object.entries(change)) if (v === "") delete q[k];
      const reply = await call("GET", `/oauth/authorize?${qs(q)}`);
      expect(reply.status).toBe(302);
      const to = new URL(reply.headers.get("location")!);
      expect(to.origin + to.pathname).toBe(REDIRECT);
      expect(to.searchParams.get("error")).toBe(error);
      expect(to.searchParams.get("state")).toBe("st-123");
      expect(to.searchParams.get("code")).toBeNull();
    }
  });
});

describe("consent", () => {
  test("the consent page's details name the agent, the gateway, its tenant and the person's role", async () => {
    const { owner, gw, client } = await world();
    const q = authorizeQuery(client.client_id, gw, pkce().challenge);
    const reply = await call("GET", `/oauth/consent?${qs(q)}`, { headers: bearer(owner.token) });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      client: { client_id: client.client_id, client_name: "Test Agent", kind: "registered" },
      gateway: { gateway_id: gw.gatewayId, name: gw.name, tenant_id: owner.tenantId, resource: gw.resource },
      redirect_uri: REDIRECT,
      scope: "mcp",
      member: { member_id: owner.memberId, role: "owner" },
    });
  });

  test("without a session: 401; a person of another tenant cannot consent (404) nor see the details", async () => {
    const { gw, client } = await world();
    const stranger = await signup();
    const q = authorizeQuery(client.client_id, gw, pkce().challenge);
    expectErrorShape(await call("POST", "/oauth/consent", { json: { ...q, approve: true }, headers: { origin: BASE } }), 401, "unauthorized");
    expectErrorShape(await consentFor(stranger.token, q), 404, "not_found");
    expectErrorShape(await call("GET", `/oauth/consent?${qs(q)}`, { headers: bearer(stranger.token) }), 404, "not_found");
  });

  test("a consent sent from another site (Origin or Sec-Fetch-Site) is refused and makes nothing", async () => {
    const { owner, gw, client } = await world();
    const q = authorizeQuery(client.client_id, gw, pkce().challenge);
    expectErrorShape(await consentFor(owner.token, q, { origin: "https://evil.example" }), 400, "invalid_request");
    expectErrorShape(await consentFor(owner.token, q, { origin: BASE, "sec-fetch-site": "cross-site" }), 400, "invalid_request");
    expectErrorShape(await consentFor(owner.token, q, { origin: BASE, "sec-fetch-site": "same-site" }), 400, "invalid_request");
    const grants = await call("GET", "/customer/oauth/grants", { headers: bearer(owner.token) });
    expect(grants.body.grants).toEqual([]);
    // The form a cross-site page could post (no JSON content type) never reaches the route.
    const formPost = await call("POST", "/oauth/consent", { ...form({ ...q, approve: "true" }), headers: { ...form({}).headers, ...bearer(owner.token) } });
    expect(formPost.status).toBe(415);
  });

  test("refusing sends access_denied with the state", async () => {
    const { owner, gw, client } = await world();
    const q = authorizeQuery(client.client_id, gw, pkce().challenge);
    const reply = await call("POST", "/oauth/consent", { json: { ...q, approve: false }, headers: { ...bearer(owner.token), origin: BASE } });
    expect(reply.status).toBe(200);
    const to = new URL(reply.body.redirect_to);
    expect(to.searchParams.get("error")).toBe("access_denied");
    expect(to.searchParams.get("state")).toBe("st-123");
  });
});

describe("POST /oauth/token", () => {
  test("the full flow: code with its verifier, the token verifies for the gateway, refresh rotates", async () => {
    const { owner, gw, client } = await world();
    const { verifier, challenge } = pkce();
    const code = await codeFor(owner.token, authorizeQuery(client.client_id, gw, challenge));
    const reply = await call("POST", "/oauth/token", form({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id, resource: gw.resource }));
    expect(reply.status).toBe(200);
    expect(reply.headers.get("cache-control")).toBe("no-store");
    expect(reply.body).toMatchObject({ token_type: "Bearer", expires_in: 600, scope: "mcp" });
    const { service } = await testService();
    const grant = await service.deps.accessTokens.verify(reply.body.access_token, gw.resource);
    expect(grant).toMatchObject({ member_id: owner.memberId, client_id: client.client_id, client_name: "Test Agent", gateway_id: gw.gatewayId });
    const refreshed = await call("POST", "/oauth/token", form({ grant_type: "refresh_token", refresh_token: reply.body.refresh_token, client_id: client.client_id, resource: gw.resource }));
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(reply.body.refresh_token);
    expect(await service.deps.accessTokens.verify(refreshed.body.access_token, gw.resource)).not.toBeNull();
    // No code or token in any log line.
    for (const secret of [code, reply.body.access_token, reply.body.refresh_token, refreshed.body.access_token, refreshed.body.refresh_token]) {
      expect(logLines.some((line) => line.includes(secret.slice(-43)))).toBe(false);
    }
  });

  test("a wrong verifier, another redirect URI, another client, no verifier: invalid_grant or invalid_request, no store", async () => {
    const { owner, gw, client } = await world();
    const { verifier, challenge } = pkce();
    const code = await codeFor(owner.token, authorizeQuery(client.client_id, gw, challenge));
    const base = { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id };
    const refused = async (fields: Record<string, string>, error: string, status = 400) => {
      const reply = await call("POST", "/oauth/token", form(fields));
      expect(reply.status).toBe(status);
      expect(reply.body.error).toBe(error);
      expect(typeof reply.body.error_description).toBe("string");
      expect(reply.headers.get("cache-control")).toBe("no-store");
    };
    await refused({ ...base, code_verifier: pkce().verifier }, "invalid_grant");
    await refused({ ...base, redirect_uri: "https://agent.example/other" }, "invalid_grant");
    await refused({ ...base, client_id: "cli_1111111111111111111111" }, "invalid_grant");
    const { code_verifier: _, ...noVerifier } = base;
    await refused(noVerifier, "invalid_request");
    await refused({ ...base, resource: `${ISSUER}/mcp/gw_0000000000000000000000` }, "invalid_target");
    await refused({ ...base, grant_type: "password" }, "unsupported_grant_type");
    await refused({ ...base, client_id: "" }, "invalid_client", 401);
    await refused({ ...base, client_secret: "s" }, "invalid_client", 401);
    // None of these used the code.
    const good = await call("POST", "/oauth/token", form(base));
    expect(good.status).toBe(200);
  });

  test("a code used twice: refused, and the tokens it issued stop working", async () => {
    const { owner, gw, client } = await world();
    const { verifier, challenge } = pkce();
    const code = await codeFor(owner.token, authorizeQuery(client.client_id, gw, challenge));
    const fields = { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id };
    const first = await call("POST", "/oauth/token", form(fields));
    expect(first.status).toBe(200);
    const second = await call("POST", "/oauth/token", form(fields));
    expect(second.status).toBe(400);
    expect(second.body.error).toBe("invalid_grant");
    const { service } = await testService();
    expect(await service.deps.accessTokens.verify(first.body.access_token, gw.resource)).toBeNull();
    const refresh = await call("POST", "/oauth/token", form({ grant_type: "refresh_token", refresh_token: first.body.refresh_token, client_id: client.client_id }));
    expect(refresh.body.error).toBe("invalid_grant");
  });

  test("a refresh token used twice revokes the family; the audit trail records the revocation", async () => {
    const { owner, gw, client } = await world();
    const { verifier, challenge } = pkce();
    const code = await codeFor(owner.token, authorizeQuery(client.client_id, gw, challenge));
    const first = (await call("POST", "/oauth/token", form({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id }))).body;
    const second = (await call("POST", "/oauth/token", form({ grant_type: "refresh_token", refresh_token: first.refresh_token, client_id: client.client_id }))).body;
    const replay = await call("POST", "/oauth/token", form({ grant_type: "refresh_token", refresh_token: first.refresh_token, client_id: client.client_id }));
    expect(replay.body.error).toBe("invalid_grant");
    const { service } = await testService();
    expect(await service.deps.accessTokens.verify(second.access_token, gw.resource)).toBeNull();
    const next = await call("POST", "/oauth/token", form({ grant_type: "refresh_token", refresh_token: second.refresh_token, client_id: client.client_id }));
    expect(next.body.error).toBe("invalid_grant");
    const audit = await call("GET", "/customer/audit?event=oauth.*", { headers: bearer(owner.token) });
    const events = audit.body.events.map((e: any) => [e.event, e.target?.reason ?? null]);
    expect(events).toContainEqual(["oauth.grant_revoked", "refresh_token_reused"]);
    expect(events).toContainEqual(["oauth.grant_created", null]);
  });

  test("a parameter sent twice is invalid_request; JSON bodies elsewhere keep their 415 rule", async () => {
    const reply = await call("POST", "/oauth/token", { body: "grant_type=refresh_token&grant_type=authorization_code&client_id=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe("invalid_request");
    const elsewhere = await call("POST", "/oauth/register", form({ redirect_uris: REDIRECT }));
    expect(elsewhere.status).toBe(415);
  });
});

describe("POST /oauth/revoke", () => {
  test("revoking a refresh token ends the grant; an unknown token gets the same 200", async () => {
    const { owner, gw, client } = await world();
    const { verifier, challenge } = pkce();
    const code = await codeFor(owner.token, authorizeQuery(client.client_id, gw, challenge));
    const tokens = (await call("POST", "/oauth/token", form({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id }))).body;
    const unknown = await call("POST", "/oauth/revoke", form({ token: "wrt_nothing", client_id: client.client_id }));
    expect(unknown.status).toBe(200);
    // Another client's revocation changes nothing.
    await call("POST", "/oauth/revoke", form({ token: tokens.refresh_token, client_id: "cli_1111111111111111111111" }));
    const { service } = await testService();
    expect(await service.deps.accessTokens.verify(tokens.access_token, gw.resource)).not.toBeNull();
    const reply = await call("POST", "/oauth/revoke", form({ token: tokens.refresh_token, client_id: client.client_id }));
    expect(reply.status).toBe(200);
    expect(await service.deps.accessTokens.verify(tokens.access_token, gw.resource)).toBeNull();
  });
});

describe("/customer/oauth/grants", () => {
  test("a member sees and revokes their own; an admin sees and revokes any; a member cannot touch another's", async () => {
    const { owner, gw, client } = await world();
    const dev = await addMember(owner.token, "developer");
    const admin = await addMember(owner.token, "admin");
    const devCode = await codeFor(dev.token, authorizeQuery(client.client_id, gw, pkce().challenge));
    const ownerCode = await codeFor(owner.token, authorizeQuery(client.client_id, gw, pkce().challenge));
    expect(devCode).not.toBe(ownerCode);
    const mine = (await call("GET", "/customer/oauth/grants", { headers: bearer(dev.token) })).body.grants;
    expect(mine.map((g: any) => g.member_id)).toEqual([dev.memberId]);
    expect(mine[0]).toMatchObject({ client_id: client.client_id, client_name: "Test Agent", gateway_id: gw.gatewayId, gateway_name: gw.name, status: "active", member_email: dev.email });
    const all = (await call("GET", "/customer/oauth/grants", { headers: bearer(admin.token) })).body.grants;
    expect(all.map((g: any) => g.member_id).sort()).toEqual([dev.memberId, owner.memberId].sort());
    const ownersGrant = all.find((g: any) => g.member_id === owner.memberId).grant_id;
    expectErrorShape(await call("DELETE", `/customer/oauth/grants/${ownersGrant}`, { headers: bearer(dev.token) }), 404, "not_found");
    expectErrorShape(await call("DELETE", "/customer/oauth/grants/grt_0000000000000000000000", { headers: bearer(admin.token) }), 404, "not_found");
    const revoked = await call("DELETE", `/customer/oauth/grants/${ownersGrant}`, { headers: bearer(admin.token) });
    expect(revoked.body).toEqual({ ok: true, grant_id: ownersGrant, status: "revoked" });
    const own = await call("DELETE", `/customer/oauth/grants/${mine[0].grant_id}`, { headers: bearer(dev.token) });
    expect(own.status).toBe(200);
    const after = (await call("GET", "/customer/oauth/grants", { headers: bearer(admin.token) })).body.grants;
    expect(after.every((g: any) => g.status === "revoked" && g.revoked_reason === "revoked")).toBe(true);
    const audit = await call("GET", "/customer/audit?event=oauth.grant_revoked", { headers: bearer(owner.token) });
    expect(audit.body.events.map((e: any) => e.actor)).toContainEqual({ member_id: admin.memberId });
  });

  test("another tenant's grant is a 404, even to its owner", async () => {
    const { owner, gw, client } = await world();
    await codeFor(owner.token, authorizeQuery(client.client_id, gw, pkce().challenge));
    const grantId = (await call("GET", "/customer/oauth/grants", { headers: bearer(owner.token) })).body.grants[0].grant_id;
    const other = await signup();
    expectErrorShape(await call("DELETE", `/customer/oauth/grants/${grantId}`, { headers: bearer(other.token) }), 404, "not_found");
    expect((await call("GET", "/customer/oauth/grants", { headers: bearer(other.token) })).body.grants).toEqual([]);
  });
});
