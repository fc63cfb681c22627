// Shapes of the /customer/mcp/gateways routes and of the remote endpoint's metadata (docs/api.md,
// "Remote MCP gateways").
import { t } from "elysia";
import { URL_MAX_LENGTH } from "../webhooks/target.ts";

/** What names a gateway in actions (mcp.<name>.<tool>): mcp_gateway_name_valid() in SQL. */
export const GATEWAY_NAME = "^[a-z0-9][a-z0-9_-]{0,62}$";

/** A secret for an upstream: sent as `Authorization: Bearer <secret>`, so visible ASCII without spaces. */
const UpstreamSecret = t.String({ minLength: 1, maxLength: 4096, pattern: "^[\\x21-\\x7e]+$" });

export const UpstreamAuth = t.Union([t.Literal("none"), t.Literal("shared"), t.Literal("per_member")], {
  description: "how the gateway authenticates to its upstream: nothing, one shared secret, or each member's own secret (Authorization: Bearer); never with the client's token",
});

export const CreateGatewayBody = t.Object(
  {
    name: t.String({ pattern: GATEWAY_NAME, description: "the server part of actions, mcp.<name>.<tool>; unique among the tenant's live gateways" }),
    // https, a public host: checked beyond the schema (src/webhooks/target.ts).
    upstream_url: t.String({ minLength: 1, maxLength: URL_MAX_LENGTH, description: "the upstream MCP server's Streamable HTTP endpoint" }),
    upstream_auth: UpstreamAuth,
    secret: t.Optional({ ...UpstreamSecret, description: "upstream_auth shared: the secret (required then, refused otherwise); stored sealed, never shown back" }),
  },
  { additionalProperties: false },
);

export const PatchGatewayBody = t.Object({ enabled: t.Boolean({ description: "false disables the gateway (its endpoint answers 404), true enables it again" }) }, { additionalProperties: false });

export const SecretBody = t.Object({ secret: UpstreamSecret }, { additionalProperties: false });

export const GatewayParams = t.Object({ id: t.String() });

const Iso = t.String({ format: "date-time" });

const GatewayFields = {
  gateway_id: t.String({ pattern: "^gw_" }),
  name: t.String(),
  url: t.String({ description: "the gateway's MCP endpoint, {PUBLIC_URL}/mcp/{gateway_id}: what a client connects to, and the resource its tokens are bound to" }),
  upstream_url: t.String(),
  upstream_auth: UpstreamAuth,
  status: t.Union([t.Literal("active"), t.Literal("disabled")]),
  created_at: Iso,
  created_by: t.Union([t.String(), t.Null()]),
  member_secret_set: t.Boolean({ description: "upstream_auth per_member: whether the caller stored their own secret" }),
};

export const Gateway = t.Object({ ok: t.Literal(true), ...GatewayFields });
export const GatewayList = t.Object({ ok: t.Literal(true), gateways: t.Array(t.Object(GatewayFields)) });
export const GatewayStatus = t.Object({ ok: t.Literal(true), gateway_id: t.String(), status: t.Union([t.Literal("active"), t.Literal("disabled")]) });
export const Done = t.Object({ ok: t.Literal(true) });
export const SecretStored = t.Object({ ok: t.Literal(true), gateway_id: t.String(), updated_at: Iso });
export const SecretDeleted = t.Object({ ok: t.Literal(true), deleted: t.Boolean() });

/** RFC 9728 Protected Resource Metadata of a gateway. */
export const ProtectedResourceMetadata = t.Object({
  resource: t.String(),
  authorization_servers: t.Array(t.String()),
  scopes_supported: t.Array(t.String()),
  bearer_methods_supported: t.Array(t.String()),
  resource_name: t.String(),
});
