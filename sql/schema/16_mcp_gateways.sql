-- Remote MCP gateways (docs/mcp.md, "Remote gateways"; docs/api.md, "Remote MCP gateways"): an
-- upstream MCP server (Streamable HTTP) a tenant's admin registers under a name, which warden serves
-- at {PUBLIC_URL}/mcp/{gateway_id} and whose every tools/call it decides. The gateway is the OAuth
-- resource server; warden the authorization server (sql/schema/17_oauth.sql).
-- An active gateway may be disabled and enabled again; a deleted one is gone for good (its row stays,
-- as receipts name it, without its secret).

-- What names a gateway in actions (mcp.<name>.<tool>) and in URLs' text: a lowercase identifier.
CREATE FUNCTION mcp_gateway_name_valid(p_name text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT p_name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'
$$;
COMMENT ON FUNCTION mcp_gateway_name_valid(text) IS 'Whether a text can name a remote gateway (the server part of its actions, mcp.<name>.<tool>).';

CREATE TABLE mcp_gateways (
  gateway_id        text NOT NULL CHECK (gateway_id ~ '^gw_[0-9A-Za-z]{22}$'),
  tenant_id         text NOT NULL REFERENCES tenants (tenant_id),
  name              text NOT NULL CHECK (mcp_gateway_name_valid(name)),
  -- Checked by the service before it gets here (an https URL whose host resolves to public
  -- addresses, as for webhooks, unless the service allows private ones).
  upstream_url      text NOT NULL CHECK (char_length(upstream_url) <= 2000 AND upstream_url ~ '^https?://[^\s/?#]+'),
  -- How the gateway authenticates to its upstream (never with the client's token): nothing, one
  -- secret of the gateway's, or a secret each member stores for themselves.
  upstream_auth     text NOT NULL DEFAULT 'none' CHECK (upstream_auth IN ('none', 'shared', 'per_member')),
  status            text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'deleted')),
  created_at        timestamptz NOT NULL DEFAULT now(),
  created_by        text,
  deleted_at        timestamptz,
  PRIMARY KEY (tenant_id, gateway_id),
  CONSTRAINT mcp_gateways_created_by_fkey FOREIGN KEY (tenant_id, created_by) REFERENCES members (tenant_id, member_id)
);
-- One live gateway per name in a tenant: actions name it.
CREATE UNIQUE INDEX mcp_gateways_live_name ON mcp_gateways (tenant_id, name) WHERE status <> 'deleted';

-- Where a gateway lives: its URL names only the gateway, so its tenant is found here first and the
-- gateway then read in its tenant (docs/scaling.md), as key_routes does for API keys. Written by
-- mcp_gateway_route_add() in the transaction that inserts the gateway; never changed.
CREATE TABLE mcp_gateway_routes (
  gateway_id  text PRIMARY KEY,
  tenant_id   text NOT NULL
);

CREATE FUNCTION mcp_gateway_route_add(p_tenant_id text, p_gateway_id text) RETURNS void
LANGUAGE sql VOLATILE AS $$
  INSERT INTO mcp_gateway_routes (gateway_id, tenant_id) VALUES (p_gateway_id, p_tenant_id)
$$;
COMMENT ON FUNCTION mcp_gateway_route_add(text, text) IS 'Records the tenant of a new gateway, in the transaction that inserts it.';
