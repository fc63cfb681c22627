-- Idempotency-Key records: the first response to a POST, replayed for 24 hours. Refusals raise WI001, WI002.
-- Nothing here turns back into a key secret: the Idempotency-Key is kept only as a hash, and the
-- response body only sealed (AES-GCM) under a key derived from the Idempotency-Key value
-- (src/http/idempotency.ts), which the database never sees.

-- The first response to a POST carrying an Idempotency-Key, replayed for 24 hours.
CREATE TABLE idempotency_keys (
  tenant_id         text NOT NULL REFERENCES tenants (tenant_id),
  -- Hex SHA-256 of the Idempotency-Key value (domain-separated from the sealing key's derivation).
  key_hash          text NOT NULL CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  -- Hex SHA-256 over method, path and the JCS body: the same key with another request is a mismatch.
  fingerprint       text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
  status            text NOT NULL DEFAULT 'in_progress' CHECK (status IN ('in_progress', 'completed')),
  response_status   integer CHECK (response_status BETWEEN 200 AND 499),
  response_headers  jsonb,
  -- base64 of the 12-byte AES-GCM nonce followed by the sealed body and its tag.
  response_sealed   text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  completed_at      timestamptz,
  PRIMARY KEY (tenant_id, key_hash),
  CONSTRAINT idempotency_keys_response_matches_status CHECK ((status = 'completed') =
    (response_status IS NOT NULL AND response_headers IS NOT NULL AND response_sealed IS NOT NULL AND completed_at IS NOT NULL))
);
CREATE INDEX idempotency_keys_tenant_idx ON idempotency_keys (tenant_id, created_at);
-- The sweeper's walk, oldest first, across tenants.
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (created_at);

-- A claim moves only in_progress -> completed, once; rows go away only by deletion.
CREATE FUNCTION idempotency_keys_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF OLD.status <> 'in_progress' OR NEW.status <> 'completed' OR NEW.tenant_id <> OLD.tenant_id
     OR NEW.key_hash <> OLD.key_hash OR NEW.fingerprint <> OLD.fingerprint OR NEW.created_at <> OLD.created_at THEN
    RAISE EXCEPTION 'an idempotency record is completed once and then never changes' USING ERRCODE = 'WI001';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION idempotency_keys_guard() IS
  'An idempotency record moves only in_progress -> completed, once, and its request columns never change (WI001).';
CREATE TRIGGER idempotency_keys_guard BEFORE UPDATE ON idempotency_keys
  FOR EACH ROW EXECUTE FUNCTION idempotency_keys_guard();

-- The most records one tenant keeps at once (each lives 24 hours): a bound on the table's growth
-- per tenant, far above what the largest daily quota of a paid plan sends with keys.
CREATE FUNCTION idempotency_keys_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 20000 $$;
COMMENT ON FUNCTION idempotency_keys_cap() IS 'Most Idempotency-Key records one tenant keeps within 24 hours (WI002 beyond).';

CREATE FUNCTION idempotency_claim(p_tenant_id text, p_key_hash text, p_fingerprint text)
RETURNS TABLE (outcome text, response_status integer, response_headers jsonb, response_sealed text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  r idempotency_keys%ROWTYPE;
BEGIN
  -- Expiry is checked on read: a record 24 hours old is never replayed, and its key is free again
  -- (the sweeper, idempotency_sweep(), removes the others).
  DELETE FROM idempotency_keys i
  WHERE i.tenant_id = p_tenant_id AND i.key_hash = p_key_hash AND i.created_at <= now() - interval '24 hours';
  LOOP
    SELECT i.* INTO r FROM idempotency_keys i WHERE i.tenant_id = p_tenant_id AND i.key_hash = p_key_hash;
    IF FOUND THEN
      RETURN QUERY SELECT
        CASE WHEN r.fingerprint <> p_fingerprint THEN 'mismatch' WHEN r.status = 'in_progress' THEN 'in_progress' ELSE 'completed' END,
        r.response_status, r.response_headers, r.response_sealed;
      RETURN;
    END IF;
    -- Counted only up to the cap, on the tenant's index: the check costs at most that many entries.
    IF (SELECT count(*) FROM (SELECT 1 FROM idempotency_keys i WHERE i.tenant_id = p_tenant_id
                                AND i.created_at > now() - interval '24 hours' LIMIT idempotency_keys_cap()) s) >= idempotency_keys_cap() THEN
      RAISE EXCEPTION 'tenant % holds % Idempotency-Key records', p_tenant_id, idempotency_keys_cap() USING ERRCODE = 'WI002';
    END IF;
    INSERT INTO idempotency_keys (tenant_id, key_hash, fingerprint)
      VALUES (p_tenant_id, p_key_hash, p_fingerprint) ON CONFLICT DO NOTHING;
    IF FOUND THEN
      RETURN QUERY SELECT 'claimed'::text, NULL::integer, NULL::jsonb, NULL::text;
      RETURN;
    END IF;
    -- Another claim of the same key committed between the two statements: read it.
  END LOOP;
END $$;
COMMENT ON FUNCTION idempotency_claim(text, text, text) IS
  'Claims an Idempotency-Key (by its hash) for a request: claimed (run it), completed (replay the stored response), in_progress, '
  'or mismatch (same key, other request). A record 24 hours old counts as absent. WI002: the tenant already holds idempotency_keys_cap() records.';

CREATE FUNCTION idempotency_sweep(p_batch integer) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_deleted integer;
BEGIN
  DELETE FROM idempotency_keys i
  WHERE (i.tenant_id, i.key_hash) IN (
    SELECT e.tenant_id, e.key_hash FROM idempotency_keys e
    WHERE e.created_at <= now() - interval '24 hours' ORDER BY e.created_at LIMIT p_batch);
  GET DIAGNOSTICS v_deleted = ROW_COUNT;
  RETURN v_deleted;
END $$;
COMMENT ON FUNCTION idempotency_sweep(integer) IS
  'Deletes up to p_batch Idempotency-Key records 24 hours old or more, of every tenant, oldest first; returns how many.';
