// The authorization request (docs/api.md, "OAuth for agents"; RFC 6749 4.1.1 with OAuth 2.1's
// PKCE and RFC 8707's resource): checked the same way when the agent's browser arrives at
// GET /oauth/authorize, when the console shows the consent page, and when the person consents.
// A problem with the client or its redirect URI is shown to the person, never sent to a redirect
// URI nobody vouched for (RFC 6749 4.1.2.1); any other problem goes back to the client by redirect.
import type { Queryable } from "../db/index.ts";
import { ClientRefused, type OAuthClient, type OAuthClients } from "./clients.ts";
import { findGateway, gatewayIdOf, type GatewayResource } from "./resources.ts";

/** The one scope warden grants: call the gateway's tools as the person, each call decided by the tenant's policy. */
export const SCOPE = "mcp";

/** The authorization request's parameters, as the query (or the consent body) carries them. */
export interface AuthorizationParams {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  state?: string;
  scope?: string;
  resource?: string;
}

export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  codeChallenge: string;
  state: string | null;
  scope: string;
  gateway: GatewayResource;
  resource: string;
}

export type Checked =
  | { kind: "ok"; request: AuthorizationRequest }
  /** Shown to the person: the client or the redirect URI is not to be trusted. */
  | { kind: "show"; message: string }
  /** Sent back to the client at its redirect URI (RFC 6749 4.1.2.1). */
  | { kind: "redirect"; redirectUri: string; error: string; description: string; state: string | null };

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const STATE_MAX = 500;

export async function checkAuthorization(db: Queryable, clients: OAuthClients, publicUrl: string, p: AuthorizationParams): Promise<Checked> {
  if (!p.client_id) return { kind: "show", message: "The request names no client_id." };
  let client: OAuthClient;
  try {
    client = await clients.resolve(p.client_id);
  } catch (err) {
    if (err instanceof ClientRefused) return { kind: "show", message: err.message };
    throw err;
  }
  if (!p.redirect_uri) return { kind: "show", message: "The request names no redirect_uri." };
  // Exactly as registered (or listed in the client's document): no prefix, no other port.
  if (!client.redirect_uris.includes(p.redirect_uri)) return { kind: "show", message: "The redirect_uri is not one this client registered." };
  const state = p.state ?? null;
  const back = (error: string, description: string): Checked => ({ kind: "redirect", redirectUri: p.redirect_uri!, error, description, state });
  if (state !== null && state.length > STATE_MAX) return back("invalid_request", `state is longer than ${STATE_MAX} characters.`);
  if (p.response_type !== "code") return back("unsupported_response_type", "response_type must be code.");
  if (!p.code_challenge) return back("invalid_request", "PKCE is required: send code_challenge and code_challenge_method=S256.");
  if (p.code_challenge_method !== "S256") return back("invalid_request", "code_challenge_method must be S256 (plain is not accepted).");
  if (!CHALLENGE.test(p.code_challenge)) return back("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters).");
  if (p.scope !== undefined && (p.scope.length > 500 || !/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(p.scope))) {
    return back("invalid_scope", "scope is not a space-separated list of scope tokens.");
  }
  if (!p.resource) return back("invalid_target", "resource is required: the URL of the remote gateway (RFC 8707).");
  const gatewayId = gatewayIdOf(publicUrl, p.resource);
  const gateway = gatewayId ? await findGateway(db, gatewayId) : null;
  if (!gateway || gateway.status !== "active") return back("invalid_target", "resource is not the URL of an active remote gateway of this service.");
  // Whatever else was asked for, the grant is the one scope warden knows.
  return { kind: "ok", request: { client, redirectUri: p.redirect_uri, codeChallenge: p.code_challenge, state, scope: SCOPE, gateway, resource: p.resource } };
}

/** The redirect URI with the response's parameters added (its own query kept), and `iss` (RFC 9207). */
export function redirectWith(redirectUri: string, params: Record<string, string | null>, issuer: string): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  url.searchParams.set("iss", issuer);
  return url.toString();
}
