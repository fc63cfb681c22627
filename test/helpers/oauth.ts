// OAuth test helpers: a remote gateway of a tenant (inserted as the gateways' API would) and a
// grant with its tokens minted without the browser flow (src/oauth/tokens.ts grant() and issue()).
import { expect } from "bun:test";
import { newId } from "../../src/ids.ts";
import { gatewayResource } from "../../src/oauth/resources.ts";
import type { IssuedTokens } from "../../src/oauth/tokens.ts";
import type { Service } from "../../src/app/service.ts";
import { BASE, testService } from "./service.ts";
import { testQuery } from "./sql.ts";

export interface TestGateway {
  gatewayId: string;
  tenantId: string;
  name: string;
  resource: string;
}

let seq = 0;

/** A live gateway of the tenant, at {PUBLIC_URL}/mcp/{gateway_id}. */
export async function addGateway(tenantId: string, service?: Service): Promise<TestGateway> {
  const { db, service: shared } = await testService();
  const gatewayId = newId("gw_");
  const name = `gw-${Date.now().toString(36)}-${seq++}`;
  await testQuery(db, "oauth_gateway_add", [gatewayId, tenantId, name]);
  await testQuery(db, "oauth_gateway_route_add", [gatewayId, tenantId]);
  return { gatewayId, tenantId, name, resource: gatewayResource((service ?? shared).deps.config.publicUrl, gatewayId) };
}

/** A PKCE pair: a verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  return { verifier, challenge: new Bun.CryptoHasher("sha256").update(verifier).digest("base64url") };
}

/** A grant of a member to a client for a gateway, with a fresh access and refresh token. */
export async function grantWithTokens(
  gw: TestGateway,
  memberId: string,
  opts: { clientId?: string; clientName?: string; redirectUri?: string; service?: Service } = {},
): Promise<IssuedTokens> {
  const service = opts.service ?? (await testService()).service;
  const tokens = service.deps.accessTokens;
  const grantId = newId("grt_");
  await tokens.grant(service.deps.db, {
    tenantId: gw.tenantId,
    gatewayId: gw.gatewayId,
    memberId,
    clientId: opts.clientId ?? "cli_test",
    clientName: opts.clientName ?? "Test agent",
    redirectUri: opts.redirectUri ?? "https://agent.example/callback",
    scope: "mcp",
    codeChallenge: pkce().challenge,
  }, grantId);
  const issued = await tokens.issue(gw.tenantId, grantId, gw.gatewayId, "mcp");
  expect(issued).not.toBeNull();
  return issued!;
}

export { BASE };

/** The consent page an authorization endpoint's answer leads to (its link; the page also goes on by itself). */
export function handoffTarget(reply: { status: number; text: string; headers: Headers }): URL {
  expect(reply.status).toBe(200);
  expect(reply.headers.get("content-type")).toMatch(/^text\/html/);
  const href = /<a href="([^"]+)">/.exec(reply.text)![1]!.replaceAll("&amp;", "&").replaceAll("&quot;", '"');
  expect(reply.text).toContain(`<meta http-equiv="refresh" content="0;url=${/<a href="([^"]+)">/.exec(reply.text)![1]}">`);
  return new URL(href);
}
