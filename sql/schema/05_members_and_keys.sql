-- The procedures that make or end a member together with API keys: signup (the tenant, its owner
-- and its first key) and a member's removal (with the keys they created). They write the tables of
-- accounts, members and keys in one transaction, so they come after all three files
-- (03_accounts.sql, 03_members.sql, 05_keys.sql) and call each one's functions. Refusals: WA007
-- (docs/error_codes.md, as for accounts) and the members' WT codes (03_members.sql).

-- Signup: the tenant, the person (its first member, the owner) and its first API key, together or
-- not at all. An email that has an account is WA007, raised here rather than told by the unique
-- index's name (a signup racing another for the same email waits for it, then finds it).
CREATE FUNCTION tenant_signup(
  p_tenant_id text, p_account_id text, p_member_id text, p_email text, p_password_hash text,
  p_key_id text, p_secret_hash text, p_hint text
) RETURNS TABLE (tenant_id text, key_id text, created_at text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_created timestamptz;
BEGIN
  INSERT INTO tenants (tenant_id) VALUES (p_tenant_id) RETURNING tenants.created_at INTO v_created;
  INSERT INTO accounts (account_id, email, password_hash, last_tenant_id, created_at)
    VALUES (p_account_id, p_email, p_password_hash, p_tenant_id, v_created)
    ON CONFLICT (email) DO NOTHING;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'an account with this email exists' USING ERRCODE = 'WA007';
  END IF;
  INSERT INTO members (member_id, tenant_id, account_id, role, joined_at)
    VALUES (p_member_id, p_tenant_id, p_account_id, 'owner', v_created);
  PERFORM member_route_add(p_account_id, p_tenant_id, p_member_id, v_created);
  INSERT INTO api_keys (key_id, tenant_id, label, secret_hash, hint, created_by)
    VALUES (p_key_id, p_tenant_id, 'default', p_secret_hash, p_hint, p_member_id);
  PERFORM key_route_add(p_tenant_id, p_key_id, p_secret_hash);
  RETURN QUERY SELECT p_tenant_id, p_key_id, iso_time(v_created);
END $$;
COMMENT ON FUNCTION tenant_signup(text, text, text, text, text, text, text, text) IS
  'Creates a tenant on the free plan, the person who signed up as its owner, and its first active API key, labelled "default"; '
  'WA007 when the email has an account.';

-- p_revoke_keys, or the tenant's revoke_keys_on_member_removal: the keys the member created that
-- still work (api_keys_of_member()) are revoked in the same transaction, by the actor, each through
-- api_key_revoke() as a revoke of its own; otherwise they keep working, and the answer lists them.
CREATE FUNCTION member_remove(p_tenant_id text, p_actor text, p_member_id text, p_now timestamptz, p_revoke_keys boolean)
RETURNS TABLE (member_id text, role text, revoked_keys jsonb, kept_keys jsonb)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_role text;
  v_account text;
  v_revoke boolean;
  v_keys jsonb;
BEGIN
  -- Anyone may leave; removing another takes an admin, and an owner for an owner.
  IF p_actor IS DISTINCT FROM p_member_id THEN
    PERFORM member_actor_check(p_tenant_id, p_actor, 'admin');
  END IF;
  SELECT m.role, m.account_id INTO v_role, v_account FROM members m
   WHERE m.member_id = p_member_id AND m.tenant_id = p_tenant_id AND m.status = 'active' FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no such member' USING ERRCODE = 'WT001';
  END IF;
  IF v_role = 'owner' AND p_actor IS DISTINCT FROM p_member_id THEN
    PERFORM member_actor_check(p_tenant_id, p_actor, 'owner');
  END IF;
  UPDATE members m SET status = 'removed', removed_at = p_now, removed_by = p_actor, session_epoch = m.session_epoch + 1
   WHERE m.tenant_id = p_tenant_id AND m.member_id = p_member_id;
  DELETE FROM member_routes r WHERE r.account_id = v_account AND r.tenant_id = p_tenant_id;
  -- Their own secrets for gateways' upstreams (sql/schema/16_mcp_gateways.sql) go with them.
  DELETE FROM mcp_gateway_secrets s WHERE s.tenant_id = p_tenant_id AND s.member_id = p_member_id;
  SELECT coalesce(p_revoke_keys, false) OR t.revoke_keys_on_member_removal INTO v_revoke FROM tenants t WHERE t.tenant_id = p_tenant_id;
  SELECT coalesce(jsonb_agg(jsonb_build_object('key_id', k.key_id, 'label', k.label, 'hint', k.hint) ORDER BY k.created_at, k.key_id), '[]'::jsonb)
    INTO v_keys FROM api_keys_of_member(p_tenant_id, p_member_id, v_revoke) k;
  IF v_revoke THEN
    PERFORM api_key_revoke(p_tenant_id, k->>'key_id', p_actor) FROM jsonb_array_elements(v_keys) k;
    RETURN QUERY SELECT p_member_id, v_role, v_keys, '[]'::jsonb;
  ELSE
    RETURN QUERY SELECT p_member_id, v_role, '[]'::jsonb, v_keys;
  END IF;
END $$;
COMMENT ON FUNCTION member_remove(text, text, text, timestamptz, boolean) IS
  'A member leaves, or an admin (an owner, for owners) removes one: its sessions of the tenant end at once, its own gateway secrets are erased. With p_revoke_keys or the tenant''s '
  'revoke_keys_on_member_removal, the keys the member created that still work are revoked (revoked_keys); otherwise they are listed (kept_keys). '
  'WT001 unknown member, WT02x actor''s role, WT003 the last owner.';
