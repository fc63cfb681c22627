// The official MCP TypeScript SDK's OAuth client functions, unmodified, against the service
// (docs/api.md, "OAuth for agents"): discovery, registration, authorization with PKCE, the code
// exchange, the refresh. Its fetch goes to the service's handler; the consent is the person's call.
import { describe, expect, test } from "bun:test";
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { bearer } from "../helpers/accounts.ts";
import { addGateway, handoffTarget } from "../helpers/oauth.ts";
import { call, signup, testService } from "../helpers/service.ts";

const { service } = await testService();
const ISSUER = service.deps.config.publicUrl;
const REDIRECT = "http://127.0.0.1:47321/callback";

/** The SDK's fetch: every request to the service's own handler, as the wire would carry it. */
const fetchFn = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => service.handle(new Request(input, init));

describe("the MCP SDK's OAuth client", () => {
  test("discovers, registers, authorizes with PKCE, exchanges and refreshes", async () => {
    const owner = await signup();
    const gw = await addGateway(owner.tenantId);

    const metadata = await discoverAuthorizationServerMetadata(ISSUER, { fetchFn });
    expect(metadata?.issuer).toBe(ISSUER);
    expect(metadata?.code_challenge_methods_supported).toEqual(["S256"]);

    const clientInformation = await registerClient(ISSUER, {
      metadata,
      clientMetadata: { client_name: "SDK agent", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" },
      fetchFn,
    });
    expect(clientInformation.client_id).toMatch(/^cli_/);

    const { authorizationUrl, codeVerifier } = await startAuthorization(ISSUER, { metadata, clientInformation, redirectUrl: REDIRECT, scope: "mcp", state: "sdk-state", resource: new URL(gw.resource) });
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${ISSUER}/oauth/authorize`);

    // The browser: the authorization endpoint sends it to the console, where the person consents.
    const authorize = await fetchFn(authorizationUrl);
    const consentPage = handoffTarget({ status: authorize.status, headers: authorize.headers, text: await authorize.text() });
    expect(consentPage.pathname).toBe("/console/consent");
    const consent = await call("POST", "/oauth/consent", { json: { ...Object.fromEntries(consentPage.searchParams), approve: true }, headers: { ...bearer(owner.token), origin: ISSUER } });
    expect(consent.status).toBe(200);
    const back = new URL(consent.body.redirect_to);
    expect(back.searchParams.get("state")).toBe("sdk-state");
    const code = back.searchParams.get("code")!;

    const tokens = await exchangeAuthorization(ISSUER, { metadata, clientInformation, authorizationCode: code, codeVerifier, redirectUri: REDIRECT, resource: new URL(gw.resource), fetchFn });
    expect(tokens.token_type).toBe("Bearer");
    expect(tokens.expires_in).toBe(600);
    const grant = await service.deps.accessTokens.verify(tokens.access_token, gw.resource);
    expect(grant).toMatchObject({ member_id: owner.memberId, client_id: clientInformation.client_id, client_name: "SDK agent", gateway_id: gw.gatewayId });

    const refreshed = await refreshAuthorization(ISSUER, { metadata, clientInformation, refreshToken: tokens.refresh_token!, resource: new URL(gw.resource), fetchFn });
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(await service.deps.accessTokens.verify(refreshed.access_token, gw.resource)).not.toBeNull();

    // The SDK reads the RFC's error body: a reused refresh token is invalid_grant, and ends the family.
    let refusal: unknown;
    try {
      await refreshAuthorization(ISSUER, { metadata, clientInformation, refreshToken: tokens.refresh_token!, fetchFn });
    } catch (err) {
      refusal = err;
    }
    expect((refusal as { errorCode?: string })?.errorCode ?? String(refusal)).toMatch(/invalid_grant/);
    expect(await service.deps.accessTokens.verify(refreshed.access_token, gw.resource)).toBeNull();
  });

  test("a code exchanged with the wrong verifier is refused as invalid_grant", async () => {
    const owner = await signup();
    const gw = await addGateway(owner.tenantId);
    const metadata = await discoverAuthorizationServerMetadata(ISSUER, { fetchFn });
    const clientInformation = await registerClient(ISSUER, { metadata, clientMetadata: { client_name: "SDK agent", redirect_uris: [REDIRECT] }, fetchFn });
    const { authorizationUrl } = await startAuthorization(ISSUER, { metadata, clientInformation, redirectUrl: REDIRECT, resource: new URL(gw.resource) });
    const consent = await call("POST", "/oauth/consent", { json: { ...Object.fromEntries(authorizationUrl.searchParams), approve: true }, headers: { ...bearer(owner.token), origin: ISSUER } });
    const code = new URL(consent.body.redirect_to).searchParams.get("code")!;
    const other = await startAuthorization(ISSUER, { metadata, clientInformation, redirectUrl: REDIRECT, resource: new URL(gw.resource) });
    await expect(exchangeAuthorization(ISSUER, { metadata, clientInformation, authorizationCode: code, codeVerifier: other.codeVerifier, redirectUri: REDIRECT, fetchFn })).rejects.toThrow(/verifier|invalid_grant/i);
  });
});
