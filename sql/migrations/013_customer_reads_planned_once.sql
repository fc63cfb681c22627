-- The two reads behind GET /customer/keys as PL/pgSQL functions (docs/performance.md section 25).
--
-- PGlite runs every statement of query() through the extended protocol unnamed: it is parsed and
-- planned anew on each call, and planning sizes every relation and index it considers with an
-- lseek(SEEK_END), which PGlite's file system answers with an fstat() of the file on disk. Under
-- load the embedded key list spent ~15% of the service thread in fstatSync alone, and ~690 µs of
-- service CPU a request in all for its two statements (the session's tenant, then the keys).
-- A PL/pgSQL function keeps its statements' plans for the session, so a call plans only the
-- trivial `SELECT * FROM f($1)` around it. On the real server postgres.js prepares named
-- statements already; there the functions cost a call each and change nothing else.
--
-- Both are reads: what they return is what the queries they replace returned, row for row.

-- The tenant behind a customer's JWT (src/accounts/sessions.ts): its plan and the session epoch
-- its tokens must carry. No row: no such tenant.
CREATE FUNCTION tenant_session(p_tenant_id text)
RETURNS TABLE (tenant_id text, plan text, session_epoch integer)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY SELECT t.tenant_id, t.plan, t.session_epoch FROM tenants t WHERE t.tenant_id = p_tenant_id;
END $$;
COMMENT ON FUNCTION tenant_session(text) IS 'The tenant behind a customer session: plan and session epoch.';

-- Every key of the tenant, oldest first; never the secret hash.
CREATE FUNCTION api_keys_of(p_tenant_id text)
RETURNS TABLE (key_id text, tenant_id text, label text, status text, created_at text,
               last_used_at text, revoked_at text, hint text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT k.key_id, k.tenant_id, k.label, k.status, iso_time(k.created_at),
           iso_time(k.last_used_at), iso_time(k.revoked_at), k.hint
    FROM api_keys k
    WHERE k.tenant_id = p_tenant_id
    ORDER BY k.created_at, k.key_id;
END $$;
COMMENT ON FUNCTION api_keys_of(text) IS 'A tenant''s API keys as GET /customer/keys lists them, oldest first; never a secret hash.';
