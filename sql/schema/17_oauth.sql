-- OAuth for agents (docs/api.md, "OAuth for agents"; docs/security.md, "OAuth tokens"): warden is
-- the authorization server of its remote gateways (16_mcp_gateways.sql). A person consents once for
-- one client (agent) and one gateway: a grant. The grant's code, access tokens and refresh tokens
-- are stored only as SHA-256 hashes; each token names its gateway in its text (so its tenant is
-- found through mcp_gateway_routes, and every statement here names its tenant).
--
-- A grant moves only active -> revoked (by the person, an admin, or on reuse of a code or refresh
-- token); revoking it ends every token it issued at once, as verification reads the grant.

-- Clients registered by RFC 7591 Dynamic Client Registration. Clients that name themselves by a
-- Client ID Metadata Document (an https URL) are not stored: their document is fetched.
CREATE TABLE oauth_clients (
  client_id      text PRIMARY KEY CHECK (client_id ~ '^cli_[0-9A-Za-z]{22}$'),
  client_name    text NOT NULL CHECK (char_length(client_name) BETWEEN 1 AND 200),
  redirect_uris  text[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 10),
  client_uri     text CHECK (char_length(client_uri) <= 2000),
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE oauth_grants (
  grant_id        text NOT NULL CHECK (grant_id ~ '^grt_[0-9A-Za-z]{22}$'),
  tenant_id       text NOT NULL REFERENCES tenants (tenant_id),
  gateway_id      text NOT NULL,
  member_id       text NOT NULL,
  -- The client as the person saw it when consenting (a DCR id or a metadata document's URL).
  client_id       text NOT NULL CHECK (char_length(client_id) BETWEEN 1 AND 2000),
  client_name     text NOT NULL CHECK (char_length(client_name) BETWEEN 1 AND 200),
  redirect_uri    text NOT NULL CHECK (char_length(redirect_uri) BETWEEN 1 AND 2000),
  scope           text NOT NULL CHECK (char_length(scope) <= 500),
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_used_at    timestamptz,
  revoked_at      timestamptz,
  revoked_by      text,
  revoked_reason  text CHECK (revoked_reason IN ('revoked', 'code_reused', 'refresh_token_reused', 'token_revoked')),
  PRIMARY KEY (tenant_id, grant_id),
  CONSTRAINT oauth_grants_gateway_fkey FOREIGN KEY (tenant_id, gateway_id) REFERENCES mcp_gateways (tenant_id, gateway_id),
  CONSTRAINT oauth_grants_member_fkey FOREIGN KEY (tenant_id, member_id) REFERENCES members (tenant_id, member_id),
  CONSTRAINT oauth_grants_revoked_by_fkey FOREIGN KEY (tenant_id, revoked_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT oauth_grants_revoked_matches_status CHECK ((status = 'revoked') = (revoked_at IS NOT NULL) AND (status = 'revoked') = (revoked_reason IS NOT NULL))
);
CREATE INDEX oauth_grants_by_member ON oauth_grants (tenant_id, member_id, created_at DESC);

-- The one-time code of a consent: bound to the client, the redirect URI, the PKCE challenge (S256)
-- and the grant (which names the gateway and the member).
CREATE TABLE oauth_codes (
  tenant_id       text NOT NULL REFERENCES tenants (tenant_id),
  code_hash       text NOT NULL CHECK (code_hash ~ '^[0-9a-f]{64}$'),
  grant_id        text NOT NULL,
  code_challenge  text NOT NULL CHECK (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz,
  PRIMARY KEY (tenant_id, code_hash),
  CONSTRAINT oauth_codes_grant_fkey FOREIGN KEY (tenant_id, grant_id) REFERENCES oauth_grants (tenant_id, grant_id)
);

-- Access and refresh tokens. A refresh token is used once: its use is recorded (used_at) and a
-- second use revokes the grant (the family).
CREATE TABLE oauth_tokens (
  tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
  token_hash  text NOT NULL CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  grant_id    text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('access', 'refresh')),
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  PRIMARY KEY (tenant_id, token_hash),
  CONSTRAINT oauth_tokens_grant_fkey FOREIGN KEY (tenant_id, grant_id) REFERENCES oauth_grants (tenant_id, grant_id),
  CONSTRAINT oauth_tokens_used_only_refresh CHECK (used_at IS NULL OR kind = 'refresh'),
  CONSTRAINT oauth_tokens_expiry_after_creation CHECK (expires_at > created_at)
);
CREATE INDEX oauth_tokens_by_grant ON oauth_tokens (tenant_id, grant_id);

-- A grant's identity never changes; only its status moves, active -> revoked, and last_used_at.
CREATE FUNCTION oauth_grant_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF (NEW.grant_id, NEW.tenant_id, NEW.gateway_id, NEW.member_id, NEW.client_id, NEW.client_name, NEW.redirect_uri, NEW.scope, NEW.created_at)
     IS DISTINCT FROM (OLD.grant_id, OLD.tenant_id, OLD.gateway_id, OLD.member_id, OLD.client_id, OLD.client_name, OLD.redirect_uri, OLD.scope, OLD.created_at) THEN
    RAISE EXCEPTION 'an OAuth grant''s identity does not change' USING ERRCODE = 'WO001';
  END IF;
  IF OLD.status = 'revoked' AND (NEW.status, NEW.revoked_at, NEW.revoked_by, NEW.revoked_reason) IS DISTINCT FROM (OLD.status, OLD.revoked_at, OLD.revoked_by, OLD.revoked_reason) THEN
    RAISE EXCEPTION 'a revoked OAuth grant stays revoked' USING ERRCODE = 'WO001';
  END IF;
  RETURN NEW;
END
$$;
COMMENT ON FUNCTION oauth_grant_guard() IS 'Keeps an OAuth grant''s identity fixed and its revocation final.';
CREATE TRIGGER oauth_grants_guard BEFORE UPDATE ON oauth_grants FOR EACH ROW EXECUTE FUNCTION oauth_grant_guard();

-- Revokes a grant (when active) and answers whether it was this call that did. p_by: the member
-- who revoked it, or NULL when the service did (a reused code or refresh token).
CREATE FUNCTION oauth_grant_revoke(p_tenant_id text, p_grant_id text, p_by text, p_reason text, p_now timestamptz) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- One UPDATE naming its tenant (a Citus cluster routes it to that tenant's shard; a modifying
  -- CTE read by another statement it cannot plan).
  UPDATE oauth_grants SET status = 'revoked', revoked_at = p_now, revoked_by = p_by, revoked_reason = p_reason
  WHERE tenant_id = p_tenant_id AND grant_id = p_grant_id AND status = 'active';
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION oauth_grant_revoke(text, text, text, text, timestamptz) IS 'Revokes an active OAuth grant (every token it issued stops working at once); true when this call revoked it.';

-- Redeems a code for an access and a refresh token. Answers the outcome and the grant:
--   issued    the code was good: it is used now, the two tokens are stored;
--   unknown   no such code;
--   mismatch  another client, redirect URI, gateway, or a verifier whose S256 is not the challenge;
--   expired   past its life;
--   reused    already redeemed: the grant it made is revoked with all its tokens (RFC 6749 4.1.2);
--   revoked   the grant was revoked meanwhile.
CREATE FUNCTION oauth_code_redeem(
  p_tenant_id text, p_code_hash text, p_client_id text, p_redirect_uri text, p_gateway_id text, p_verifier_s256 text,
  p_access_hash text, p_access_expires timestamptz, p_refresh_hash text, p_refresh_expires timestamptz, p_now timestamptz
) RETURNS TABLE (outcome text, grant_id text, revoked boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_code oauth_codes%ROWTYPE;
  v_grant oauth_grants%ROWTYPE;
BEGIN
  SELECT * INTO v_code FROM oauth_codes c WHERE c.tenant_id = p_tenant_id AND c.code_hash = p_code_hash FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'unknown'::text, NULL::text, false;
    RETURN;
  END IF;
  SELECT * INTO v_grant FROM oauth_grants g WHERE g.tenant_id = p_tenant_id AND g.grant_id = v_code.grant_id FOR UPDATE;
  IF v_code.used_at IS NOT NULL THEN
    RETURN QUERY SELECT 'reused'::text, v_grant.grant_id, oauth_grant_revoke(p_tenant_id, v_grant.grant_id, NULL, 'code_reused', p_now);
    RETURN;
  END IF;
  IF v_code.expires_at <= p_now THEN
    RETURN QUERY SELECT 'expired'::text, v_grant.grant_id, false;
    RETURN;
  END IF;
  IF v_grant.client_id <> p_client_id OR v_grant.redirect_uri <> p_redirect_uri OR v_grant.gateway_id <> p_gateway_id
     OR v_code.code_challenge <> p_verifier_s256 THEN
    RETURN QUERY SELECT 'mismatch'::text, v_grant.grant_id, false;
    RETURN;
  END IF;
  IF v_grant.status <> 'active' THEN
    RETURN QUERY SELECT 'revoked'::text, v_grant.grant_id, false;
    RETURN;
  END IF;
  UPDATE oauth_codes c SET used_at = p_now WHERE c.tenant_id = p_tenant_id AND c.code_hash = p_code_hash;
  INSERT INTO oauth_tokens (tenant_id, token_hash, grant_id, kind, created_at, expires_at)
    VALUES (p_tenant_id, p_access_hash, v_grant.grant_id, 'access', p_now, p_access_expires),
           (p_tenant_id, p_refresh_hash, v_grant.grant_id, 'refresh', p_now, p_refresh_expires);
  UPDATE oauth_grants g SET last_used_at = p_now WHERE g.tenant_id = p_tenant_id AND g.grant_id = v_grant.grant_id;
  RETURN QUERY SELECT 'issued'::text, v_grant.grant_id, false;
END
$$;
COMMENT ON FUNCTION oauth_code_redeem(text, text, text, text, text, text, text, timestamptz, text, timestamptz, timestamptz) IS
  'Redeems an authorization code once (PKCE S256, client, redirect URI and gateway checked); a second redemption revokes its grant.';

-- Rotates a refresh token: the old one is used now, a new access and refresh token are stored.
-- Outcomes as oauth_code_redeem(); a refresh token used a second time revokes its grant (reused).
CREATE FUNCTION oauth_refresh_rotate(
  p_tenant_id text, p_refresh_hash text, p_client_id text, p_gateway_id text,
  p_access_hash text, p_access_expires timestamptz, p_new_refresh_hash text, p_refresh_expires timestamptz, p_now timestamptz
) RETURNS TABLE (outcome text, grant_id text, scope text, revoked boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_token oauth_tokens%ROWTYPE;
  v_grant oauth_grants%ROWTYPE;
BEGIN
  SELECT * INTO v_token FROM oauth_tokens t WHERE t.tenant_id = p_tenant_id AND t.token_hash = p_refresh_hash AND t.kind = 'refresh' FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'unknown'::text, NULL::text, NULL::text, false;
    RETURN;
  END IF;
  SELECT * INTO v_grant FROM oauth_grants g WHERE g.tenant_id = p_tenant_id AND g.grant_id = v_token.grant_id FOR UPDATE;
  IF v_token.used_at IS NOT NULL THEN
    RETURN QUERY SELECT 'reused'::text, v_grant.grant_id, v_grant.scope, oauth_grant_revoke(p_tenant_id, v_grant.grant_id, NULL, 'refresh_token_reused', p_now);
    RETURN;
  END IF;
  IF v_grant.status <> 'active' THEN
    RETURN QUERY SELECT 'revoked'::text, v_grant.grant_id, v_grant.scope, false;
    RETURN;
  END IF;
  IF v_token.expires_at <= p_now THEN
    RETURN QUERY SELECT 'expired'::text, v_grant.grant_id, v_grant.scope, false;
    RETURN;
  END IF;
  IF v_grant.client_id <> p_client_id OR v_grant.gateway_id <> p_gateway_id THEN
    RETURN QUERY SELECT 'mismatch'::text, v_grant.grant_id, v_grant.scope, false;
    RETURN;
  END IF;
  UPDATE oauth_tokens t SET used_at = p_now WHERE t.tenant_id = p_tenant_id AND t.token_hash = p_refresh_hash;
  INSERT INTO oauth_tokens (tenant_id, token_hash, grant_id, kind, created_at, expires_at)
    VALUES (p_tenant_id, p_access_hash, v_grant.grant_id, 'access', p_now, p_access_expires),
           (p_tenant_id, p_new_refresh_hash, v_grant.grant_id, 'refresh', p_now, p_refresh_expires);
  UPDATE oauth_grants g SET last_used_at = p_now WHERE g.tenant_id = p_tenant_id AND g.grant_id = v_grant.grant_id;
  RETURN QUERY SELECT 'issued'::text, v_grant.grant_id, v_grant.scope, false;
END
$$;
COMMENT ON FUNCTION oauth_refresh_rotate(text, text, text, text, text, timestamptz, text, timestamptz, timestamptz) IS
  'Rotates a refresh token (used once; client and gateway checked); a second use revokes its grant and every token of it.';

-- The grant of a live access token for a gateway, with the gateway: the token unexpired, its grant
-- active, the member still active (with their role now), the gateway active. No row: the token does
-- not hold. With the gateway's sealed secrets a call needs (its key's, its shared one, the member's
-- own: NULL when none). The gateway's tenant from its route first, then one statement in that
-- tenant (on a cluster, one shard): a call through a gateway reads all it needs at once. A
-- function, so that PGlite, which plans every unnamed statement anew, keeps its plan.
CREATE FUNCTION oauth_access_grant(p_gateway_id text, p_token_hash text, p_now timestamptz)
RETURNS TABLE (grant_id text, tenant_id text, account_id text, member_id text, role text, client_id text, client_name text,
               redirect_uri text, gateway_id text, scope text, expires_at timestamptz,
               gateway_name text, upstream_url text, upstream_auth text, gateway_status text,
               key_secret_sealed text, secret_sealed text, member_secret_sealed text)
LANGUAGE plpgsql STABLE SET jit = off AS $$
#variable_conflict use_column
DECLARE
  v_tenant text;
BEGIN
  SELECT r.tenant_id INTO v_tenant FROM mcp_gateway_routes r WHERE r.gateway_id = p_gateway_id;
  IF v_tenant IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY SELECT g.grant_id, g.tenant_id, m.account_id, g.member_id, m.role, g.client_id, g.client_name, g.redirect_uri, g.gateway_id, g.scope, t.expires_at,
                      w.name, w.upstream_url, w.upstream_auth, w.status, w.key_secret_sealed, w.secret_sealed, s.secret_sealed
    FROM oauth_tokens t
    JOIN oauth_grants g ON g.tenant_id = t.tenant_id AND g.grant_id = t.grant_id
    JOIN members m ON m.tenant_id = g.tenant_id AND m.member_id = g.member_id
    JOIN mcp_gateways w ON w.tenant_id = g.tenant_id AND w.gateway_id = g.gateway_id
    LEFT JOIN mcp_gateway_secrets s ON s.tenant_id = g.tenant_id AND s.gateway_id = g.gateway_id AND s.member_id = g.member_id
    WHERE t.tenant_id = v_tenant AND t.token_hash = p_token_hash AND t.kind = 'access' AND t.expires_at > p_now
      AND g.gateway_id = p_gateway_id AND g.status = 'active' AND m.status = 'active' AND w.status = 'active';
END $$;
COMMENT ON FUNCTION oauth_access_grant(text, text, timestamptz) IS
  'The grant of a live access token for a gateway (token unexpired, grant, member and gateway active), with the gateway and its sealed secrets for the member; '
  'no row: the token does not hold.';
