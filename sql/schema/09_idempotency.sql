-- Idempotency-Key records: the first response to a POST, replayed for 24 hours. Refusals raise WI001.

-- The first response to a POST carrying an Idempotency-Key, replayed for 24 hours.
CREATE TABLE idempotency_keys (
  tenant_id         text NOT NULL REFERENCES tenants (tenant_id),
  idempotency_key   text NOT NULL CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
  -- Hex SHA-256 over method, path and the JCS body: the same key with another request is a mismatch.
  fingerprint       text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
  status            text NOT NULL DEFAULT 'in_progress' CHECK (status IN ('in_progress', 'completed')),
  response_status   integer CHECK (response_status BETWEEN 200 AND 499),
  response_headers  jsonb,
  response_body     text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  completed_at      timestamptz,
  PRIMARY KEY (tenant_id, idempotency_key),
  CONSTRAINT idempotency_keys_response_matches_status CHECK ((status = 'completed') =
    (response_status IS NOT NULL AND response_headers IS NOT NULL AND response_body IS NOT NULL AND completed_at IS NOT NULL))
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (tenant_id, created_at);

-- A claim moves only in_progress -> completed, once; rows go away only by deletion.
CREATE FUNCTION idempotency_keys_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status <> 'in_progress' OR NEW.status <> 'completed' OR NEW.tenant_id <> OLD.tenant_id
     OR NEW.idempotency_key <> OLD.idempotency_key OR NEW.fingerprint <> OLD.fingerprint OR NEW.created_at <> OLD.created_at THEN
    RAISE EXCEPTION 'an idempotency record is completed once and then never changes' USING ERRCODE = 'WI001';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION idempotency_keys_guard() IS
  'An idempotency record moves only in_progress -> completed, once, and its request columns never change (WI001).';
CREATE TRIGGER idempotency_keys_guard BEFORE UPDATE ON idempotency_keys
  FOR EACH ROW EXECUTE FUNCTION idempotency_keys_guard();

CREATE FUNCTION idempotency_claim(p_tenant_id text, p_key text, p_fingerprint text)
RETURNS TABLE (outcome text, response_status integer, response_headers jsonb, response_body text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  r idempotency_keys%ROWTYPE;
BEGIN
  -- Keys live 24 hours: this tenant's expired records go first, so an old key is free again.
  DELETE FROM idempotency_keys i WHERE i.tenant_id = p_tenant_id AND i.created_at < now() - interval '24 hours';
  LOOP
    INSERT INTO idempotency_keys (tenant_id, idempotency_key, fingerprint)
      VALUES (p_tenant_id, p_key, p_fingerprint) ON CONFLICT DO NOTHING;
    IF FOUND THEN
      RETURN QUERY SELECT 'claimed'::text, NULL::integer, NULL::jsonb, NULL::text;
      RETURN;
    END IF;
    SELECT i.* INTO r FROM idempotency_keys i WHERE i.tenant_id = p_tenant_id AND i.idempotency_key = p_key;
    IF FOUND THEN
      RETURN QUERY SELECT
        CASE WHEN r.fingerprint <> p_fingerprint THEN 'mismatch' WHEN r.status = 'in_progress' THEN 'in_progress' ELSE 'completed' END,
        r.response_status, r.response_headers, r.response_body;
      RETURN;
    END IF;
    -- The other claim was released between the two statements: try again.
  END LOOP;
END $$;
COMMENT ON FUNCTION idempotency_claim(text, text, text) IS
  'Claims an Idempotency-Key for a request: claimed (run it), completed (replay the stored response), in_progress, or mismatch (same key, other request).';
