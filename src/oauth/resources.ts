// The resources warden issues tokens for: each remote MCP gateway, at {PUBLIC_URL}/mcp/{gateway_id}
// (docs/mcp.md, "Remote gateways"). An OAuth resource indicator (RFC 8707) names one of them by
// that URL, exactly; the gateway (src/gateways/) checks a token against the same URL.
import type { Queryable } from "../db/index.ts";

export interface GatewayResource {
  gateway_id: string;
  tenant_id: string;
  name: string;
  upstream_url: string;
  upstream_auth: "none" | "shared" | "per_member";
  status: "active" | "disabled" | "deleted";
  /**
   * What a call through it needs, sealed (src/gateways/manage.ts opens them), for the member whose
   * token it was read with: its key's secret, its shared secret, the member's own (null: none).
   * Read with the token (OAuthTokens.verify()), so that a call reads once.
   */
  sealed?: { key: string | null; shared: string | null; member: string | null };
}

/** The scope a token needs for a gateway's endpoint (tools/list, tools/call and the rest of MCP). */
export const GATEWAY_SCOPE = "mcp";

const GATEWAY_ID = /^gw_[0-9A-Za-z]{22}$/;

/** The canonical resource URL of a gateway: what tokens are bound to and what clients connect to. */
export function gatewayResource(publicUrl: string, gatewayId: string): string {
  return `${publicUrl}/mcp/${gatewayId}`;
}

/** The gateway id a resource URL names, when it is one of this service's gateway URLs exactly; else null. */
export function gatewayIdOf(publicUrl: string, resource: string): string | null {
  const prefix = `${publicUrl}/mcp/`;
  if (!resource.startsWith(prefix)) return null;
  const id = resource.slice(prefix.length);
  return GATEWAY_ID.test(id) ? id : null;
}

/** A gateway by id, whatever its status; null when there is none. */
export async function findGateway(db: Queryable, gatewayId: string): Promise<GatewayResource | null> {
  if (!GATEWAY_ID.test(gatewayId)) return null;
  return ((await db.one("gateways/resolve", [gatewayId])) as GatewayResource | undefined) ?? null;
}
