// What a remote MCP gateway learns from an OAuth access token (docs/mcp.md, "Remote gateways"):
// the person who consented (account and member, with the member's role), the agent (the OAuth
// client) and the resource the token is bound to (RFC 8707). Warden is the authorization server
// (src/oauth/) and every gateway a resource server (src/gateways/): this is the one thing they share.
import type { GatewayResource } from "./resources.ts";

/** A valid access token's grant, as the resource server sees it. */
export interface AccessGrant {
  /** The grant (one consent of one person to one client for one gateway); revoking it ends its tokens. */
  grant_id: string;
  tenant_id: string;
  /** The person: their account, and their membership of the tenant with its role. */
  account_id: string;
  member_id: string;
  role: string;
  /** The agent: the OAuth client's id (a URL for a Client ID Metadata Document) and its display name. */
  client_id: string;
  client_name: string;
  /** The redirect URI the person consented for: its origin is the agent's own (where a browser-based agent's pages run). */
  redirect_uri: string;
  /** The gateway the token is bound to (its id) and its canonical resource URL. */
  gateway_id: string;
  resource: string;
  /** Space-separated scopes granted. */
  scope: string;
  expires_at: string;
  /** The gateway, active, as read with the grant, when the token store read it (OAuthTokens does). */
  gateway?: GatewayResource;
}

/** Checks access tokens for a resource server. */
export interface AccessTokens {
  /**
   * The grant of `token` when it is a live access token (not expired, its grant not revoked)
   * issued for exactly `resource`; null otherwise (the caller answers 401 with WWW-Authenticate).
   */
  verify(token: string, resource: string): Promise<AccessGrant | null>;
}
