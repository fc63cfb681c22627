-- Remote MCP gateways (docs/mcp.md, "Remote gateways"; docs/api.md, "Remote MCP gateways"): an
-- upstream MCP server (Streamable HTTP) a tenant's admin registers under a name, which warden serves
-- at {PUBLIC_URL}/mcp/{gateway_id} and whose every tools/call it decides. The gateway is the OAuth
-- resource server; warden the authorization server (src/oauth/).
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
  -- upstream_auth 'shared': the gateway's one secret for its upstream, sealed (SecretBox, purpose
  -- "warden mcp gateway secret v1"); erased when the gateway is deleted.
  secret_sealed     text,
  -- The API key the gateway's decisions are recorded under (receipts and approvals name a key):
  -- made with the gateway, revoked with its deletion; its secret, sealed, is held only here.
  key_id            text NOT NULL,
  key_secret_sealed text,
  PRIMARY KEY (tenant_id, gateway_id),
  CONSTRAINT mcp_gateways_created_by_fkey FOREIGN KEY (tenant_id, created_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT mcp_gateways_key_fkey FOREIGN KEY (tenant_id, key_id) REFERENCES api_keys (tenant_id, key_id),
  -- A live gateway holds exactly the secrets its upstream_auth needs; a deleted one none.
  CONSTRAINT mcp_gateways_secrets CHECK (
    CASE WHEN status = 'deleted' THEN secret_sealed IS NULL AND key_secret_sealed IS NULL AND deleted_at IS NOT NULL
         ELSE (secret_sealed IS NOT NULL) = (upstream_auth = 'shared') AND key_secret_sealed IS NOT NULL AND deleted_at IS NULL END)
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

-- upstream_auth 'per_member': each member's own secret for the upstream (Authorization: Bearer),
-- sealed, set and erased by that member alone; never shown back.
CREATE TABLE mcp_gateway_secrets (
  tenant_id      text NOT NULL,
  gateway_id     text NOT NULL,
  member_id      text NOT NULL,
  secret_sealed  text NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, gateway_id, member_id),
  FOREIGN KEY (tenant_id, gateway_id) REFERENCES mcp_gateways (tenant_id, gateway_id),
  FOREIGN KEY (tenant_id, member_id) REFERENCES members (tenant_id, member_id)
);

-- Refusals of the gateways' procedures (docs/error_codes.md).
-- WG001: no live gateway of this tenant with that id; WG002: a per-member secret for a gateway
-- whose upstream takes none; WG003: a live gateway of the tenant has that name.

CREATE FUNCTION mcp_gateway_create(p_gateway_id text, p_tenant_id text, p_actor text, p_name text, p_upstream_url text,
                                   p_upstream_auth text, p_secret_sealed text, p_key_id text, p_key_secret_hash text,
                                   p_key_hint text, p_key_secret_sealed text)
RETURNS TABLE (gateway_id text, name text, upstream_url text, upstream_auth text, status text, created_at text, created_by text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v mcp_gateways;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_actor, 'admin');
  PERFORM 1 FROM mcp_gateways g WHERE g.tenant_id = p_tenant_id AND g.name = p_name AND g.status <> 'deleted';
  IF FOUND THEN
    RAISE EXCEPTION 'a live gateway is named %', p_name USING ERRCODE = 'WG003';
  END IF;
  -- The gateway's own key, within the tenant's caps of keys (WK002), labelled after it.
  PERFORM api_key_create(p_key_id, p_tenant_id, 'mcp gateway ' || p_name, p_key_secret_hash, p_key_hint, p_actor,
                         jsonb_build_object('metadata', jsonb_build_object('mcp_gateway', p_gateway_id)));
  INSERT INTO mcp_gateways AS g (gateway_id, tenant_id, name, upstream_url, upstream_auth, created_by, secret_sealed, key_id, key_secret_sealed)
  VALUES (p_gateway_id, p_tenant_id, p_name, p_upstream_url, p_upstream_auth, p_actor, p_secret_sealed, p_key_id, p_key_secret_sealed)
  RETURNING g.* INTO v;
  PERFORM mcp_gateway_route_add(p_tenant_id, p_gateway_id);
  RETURN QUERY SELECT v.gateway_id, v.name, v.upstream_url, v.upstream_auth, v.status, iso_time(v.created_at), v.created_by;
END $$;
COMMENT ON FUNCTION mcp_gateway_create(text, text, text, text, text, text, text, text, text, text, text) IS
  'An admin (or owner) registers an upstream MCP server under a name (WG003 when a live gateway has it; WT021 the role), '
  'with the API key its decisions are recorded under (WK002 beyond the active keys'' cap). The service checked the URL before.';

CREATE FUNCTION mcp_gateway_set_status(p_tenant_id text, p_actor text, p_gateway_id text, p_enabled boolean)
RETURNS TABLE (gateway_id text, status text, changed boolean)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_old text;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_actor, 'admin');
  SELECT g.status INTO v_old FROM mcp_gateways g
  WHERE g.tenant_id = p_tenant_id AND g.gateway_id = p_gateway_id AND g.status <> 'deleted' FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no gateway %', p_gateway_id USING ERRCODE = 'WG001';
  END IF;
  UPDATE mcp_gateways g SET status = CASE WHEN p_enabled THEN 'active' ELSE 'disabled' END
  WHERE g.tenant_id = p_tenant_id AND g.gateway_id = p_gateway_id;
  RETURN QUERY SELECT p_gateway_id, CASE WHEN p_enabled THEN 'active' ELSE 'disabled' END,
                      v_old IS DISTINCT FROM CASE WHEN p_enabled THEN 'active' ELSE 'disabled' END;
END $$;
COMMENT ON FUNCTION mcp_gateway_set_status(text, text, text, boolean) IS
  'An admin (or owner) disables a live gateway (its endpoint refuses every request) or enables it again; WG001 when the tenant has no live gateway of that id.';

CREATE FUNCTION mcp_gateway_delete(p_tenant_id text, p_actor text, p_gateway_id text)
RETURNS TABLE (gateway_id text, name text, key_id text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v mcp_gateways;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_actor, 'admin');
  SELECT g.* INTO v FROM mcp_gateways g
  WHERE g.tenant_id = p_tenant_id AND g.gateway_id = p_gateway_id AND g.status <> 'deleted' FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no gateway %', p_gateway_id USING ERRCODE = 'WG001';
  END IF;
  DELETE FROM mcp_gateway_secrets s WHERE s.tenant_id = p_tenant_id AND s.gateway_id = p_gateway_id;
  UPDATE mcp_gateways g SET status = 'deleted', deleted_at = now(), secret_sealed = NULL, key_secret_sealed = NULL
  WHERE g.tenant_id = p_tenant_id AND g.gateway_id = p_gateway_id;
  PERFORM api_key_revoke(p_tenant_id, v.key_id, p_actor);
  RETURN QUERY SELECT v.gateway_id, v.name, v.key_id;
END $$;
COMMENT ON FUNCTION mcp_gateway_delete(text, text, text) IS
  'An admin (or owner) deletes a live gateway for good: its secrets and its members'' secrets are erased, its key revoked; the row stays, '
  'as receipts name it. WG001 when the tenant has no live gateway of that id.';

CREATE FUNCTION mcp_gateway_secret_set(p_tenant_id text, p_member_id text, p_gateway_id text, p_secret_sealed text)
RETURNS TABLE (gateway_id text, updated_at text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_auth text;
  v_at timestamptz := now();
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_member_id, 'viewer');
  SELECT g.upstream_auth INTO v_auth FROM mcp_gateways g
  WHERE g.tenant_id = p_tenant_id AND g.gateway_id = p_gateway_id AND g.status <> 'deleted' FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no gateway %', p_gateway_id USING ERRCODE = 'WG001';
  END IF;
  IF v_auth <> 'per_member' THEN
    RAISE EXCEPTION 'gateway % takes no per-member secret', p_gateway_id USING ERRCODE = 'WG002';
  END IF;
  INSERT INTO mcp_gateway_secrets AS s (tenant_id, gateway_id, member_id, secret_sealed, updated_at)
  VALUES (p_tenant_id, p_gateway_id, p_member_id, p_secret_sealed, v_at)
  ON CONFLICT (tenant_id, gateway_id, member_id) DO UPDATE SET secret_sealed = EXCLUDED.secret_sealed, updated_at = EXCLUDED.updated_at;
  RETURN QUERY SELECT p_gateway_id, iso_time(v_at);
END $$;
COMMENT ON FUNCTION mcp_gateway_secret_set(text, text, text, text) IS
  'A member stores (or replaces) their own sealed secret for a live per-member gateway''s upstream. WG001 no such live gateway; WG002 its upstream takes none.';

CREATE FUNCTION mcp_gateway_secret_delete(p_tenant_id text, p_member_id text, p_gateway_id text)
RETURNS TABLE (deleted boolean)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_member_id, 'viewer');
  PERFORM 1 FROM mcp_gateways g WHERE g.tenant_id = p_tenant_id AND g.gateway_id = p_gateway_id AND g.status <> 'deleted';
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no gateway %', p_gateway_id USING ERRCODE = 'WG001';
  END IF;
  DELETE FROM mcp_gateway_secrets s WHERE s.tenant_id = p_tenant_id AND s.gateway_id = p_gateway_id AND s.member_id = p_member_id;
  RETURN QUERY SELECT FOUND;
END $$;
COMMENT ON FUNCTION mcp_gateway_secret_delete(text, text, text) IS
  'A member erases their own secret for a live gateway (deleted false: they had none). WG001 no such live gateway.';

-- JWT_SECRET changed (JWT_SECRET_PREVIOUS set): what the previous service secret sealed is sealed
-- again under the new one at start (src/gateways/manage.ts, resealGatewaySecrets()).
CREATE FUNCTION mcp_gateways_sealed_page(p_after_tenant text, p_after_gateway text, p_limit integer)
RETURNS TABLE (tenant_id text, gateway_id text, key_secret_sealed text, secret_sealed text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  -- PL/pgSQL rather than SQL, as webhooks_sealed_page().
  RETURN QUERY
    SELECT g.tenant_id, g.gateway_id, g.key_secret_sealed, g.secret_sealed
    FROM mcp_gateways g
    WHERE g.status <> 'deleted' AND (g.tenant_id, g.gateway_id) > (p_after_tenant, p_after_gateway)
    ORDER BY g.tenant_id, g.gateway_id
    LIMIT p_limit;
END $$;
COMMENT ON FUNCTION mcp_gateways_sealed_page(text, text, integer) IS 'Live gateways'' sealed secrets after a (tenant, gateway id) position, in key order, for the reseal at start.';

CREATE FUNCTION mcp_gateway_reseal(p_tenant_id text, p_gateway_id text, p_old_key text, p_old_shared text, p_new_key text, p_new_shared text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE mcp_gateways g SET key_secret_sealed = p_new_key, secret_sealed = p_new_shared
   WHERE g.tenant_id = p_tenant_id AND g.gateway_id = p_gateway_id AND g.status <> 'deleted'
     AND g.key_secret_sealed = p_old_key AND g.secret_sealed IS NOT DISTINCT FROM p_old_shared;
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION mcp_gateway_reseal(text, text, text, text, text, text) IS
  'Replaces a gateway''s sealed secrets by the same secrets sealed under the new service secret, only if they are still the ones read; true when replaced.';

CREATE FUNCTION mcp_gateway_secrets_sealed_page(p_after_tenant text, p_after_gateway text, p_after_member text, p_limit integer)
RETURNS TABLE (tenant_id text, gateway_id text, member_id text, secret_sealed text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN QUERY
    SELECT s.tenant_id, s.gateway_id, s.member_id, s.secret_sealed
    FROM mcp_gateway_secrets s
    WHERE (s.tenant_id, s.gateway_id, s.member_id) > (p_after_tenant, p_after_gateway, p_after_member)
    ORDER BY s.tenant_id, s.gateway_id, s.member_id
    LIMIT p_limit;
END $$;
COMMENT ON FUNCTION mcp_gateway_secrets_sealed_page(text, text, text, integer) IS 'Members'' sealed upstream secrets after a (tenant, gateway, member) position, in key order, for the reseal at start.';

CREATE FUNCTION mcp_gateway_secret_reseal(p_tenant_id text, p_gateway_id text, p_member_id text, p_old text, p_new text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE mcp_gateway_secrets s SET secret_sealed = p_new
   WHERE s.tenant_id = p_tenant_id AND s.gateway_id = p_gateway_id AND s.member_id = p_member_id AND s.secret_sealed = p_old;
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION mcp_gateway_secret_reseal(text, text, text, text, text) IS
  'Replaces a member''s sealed upstream secret by the same secret sealed under the new service secret, only if it is still the one read; true when replaced.';
