-- Policies: each tenant's custom policy versions, immutable once stored, and its stored test
-- suite. Refusals raise WP001 (a change of a version), WP002 (the cap on versions) and WP003 (a
-- publish checked against a suite that is no longer the stored one).

-- Custom policy versions of a tenant. Version 1 of every tenant is the built-in default
-- (pol_default), which lives in code; custom versions start at 2. The document is stored as its
-- RFC 8785 (JCS) text, the exact bytes its hash covers.
CREATE TABLE policies (
  tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
  version     integer NOT NULL CHECK (version >= 2),
  policy_id   text NOT NULL,
  document    text NOT NULL CHECK (starts_with(document, '{')),
  hash        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  -- The member of the tenant who published it (NULL: an operator, or before it mattered).
  published_by  text,
  PRIMARY KEY (tenant_id, version),
  CONSTRAINT policies_published_by_fkey FOREIGN KEY (tenant_id, published_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT policies_policy_id_matches_tenant CHECK (policy_id = 'pol_' || substr(tenant_id, 6)),
  CONSTRAINT policies_hash_matches_document CHECK (hash = sha256_hex(document))
);

-- Versions are never deleted (receipts name them), so the cap is on what a tenant may ever store.
CREATE FUNCTION policy_versions_cap() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 1000 $$;
COMMENT ON FUNCTION policy_versions_cap() IS
  'The most custom policy versions one tenant may store (versions 2 .. cap + 1); docs/security.md.';

CREATE FUNCTION policies_cap() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- Versions are unique per tenant and start at 2, so a bound on the number bounds the count.
  IF NEW.version > policy_versions_cap() + 1 THEN
    RAISE EXCEPTION 'a tenant stores at most % policy versions', policy_versions_cap() USING ERRCODE = 'WP002';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION policies_cap() IS
  'Refuses a policy version numbered above policy_versions_cap() + 1, so a tenant stores at most policy_versions_cap() versions (WP002).';
CREATE TRIGGER policies_cap BEFORE INSERT ON policies
  FOR EACH ROW EXECUTE FUNCTION policies_cap();

-- Receipts name a policy version forever, so a version never changes or disappears.
CREATE FUNCTION policies_immutable() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'policy versions are immutable' USING ERRCODE = 'WP001';
END $$;
COMMENT ON FUNCTION policies_immutable() IS 'Refuses UPDATE, DELETE and TRUNCATE of a stored policy version (WP001).';
CREATE TRIGGER policies_immutable BEFORE UPDATE OR DELETE ON policies
  FOR EACH ROW EXECUTE FUNCTION policies_immutable();
CREATE TRIGGER policies_no_truncate BEFORE TRUNCATE ON policies
  FOR EACH STATEMENT EXECUTE FUNCTION policies_immutable();

-- A new version moves the tenant's key context (05_keys.sql): its keys decide under it now.
CREATE TRIGGER policies_key_context AFTER INSERT ON policies
  FOR EACH ROW EXECUTE FUNCTION key_context_changed();

-- p_suite is the stored suite the caller ran the document's tests against, as tests_get read it
-- (NULL: none stored). Compared under the lock: a suite replaced since is WP003, and the caller
-- runs the new one, so no version is published past a test it would fail. p_published_by: the
-- acting member, an admin or an owner (NULL: an operator).
CREATE FUNCTION policy_publish(p_tenant_id text, p_document text, p_hash text, p_suite text, p_published_by text)
RETURNS TABLE (policy_id text, version integer, hash text, document text, created_at text, published_by text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_next integer;
  v policies;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_published_by, 'admin');
  -- Concurrent publishes of one tenant take turns (and get consecutive versions); other tenants
  -- are not held up.
  PERFORM pg_advisory_xact_lock(hashtextextended('warden.policy:' || p_tenant_id, 0));
  IF p_suite IS DISTINCT FROM (SELECT t.cases FROM policy_tests t WHERE t.tenant_id = p_tenant_id) THEN
    RAISE EXCEPTION 'the stored policy tests of % changed since they were run', p_tenant_id USING ERRCODE = 'WP003';
  END IF;
  SELECT coalesce(max(p.version), 1) + 1 INTO v_next FROM policies p WHERE p.tenant_id = p_tenant_id;
  -- The time formed after the insert: a distributed cluster refuses iso_time() in RETURNING (docs/scaling.md).
  INSERT INTO policies AS p (tenant_id, version, policy_id, document, hash, published_by)
  VALUES (p_tenant_id, v_next, 'pol_' || substr(p_tenant_id, 6), p_document, p_hash, p_published_by)
  RETURNING p.* INTO v;
  RETURN QUERY SELECT v.policy_id, v.version, v.hash, v.document, iso_time(v.created_at), v.published_by;
END $$;
COMMENT ON FUNCTION policy_publish(text, text, text, text, text) IS
  'Stores a new immutable policy version of a tenant (the latest plus one; 2 for the first custom one), published by a member (an admin or '
  'an owner: WT001/WT021 otherwise; NULL: an operator), and returns it; WP003 when p_suite is not the stored test suite.';

-- A tenant's stored policy test suite (PUT /customer/policy/tests): the JSON array of cases that
-- every publish must pass first. No row: an empty suite.
CREATE TABLE policy_tests (
  tenant_id   text PRIMARY KEY REFERENCES tenants (tenant_id),
  cases       text NOT NULL CHECK (starts_with(cases, '[')),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
