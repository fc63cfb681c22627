-- Foundation: plans, tenants, API keys, server secrets and receipt signing keys.
-- Written for PostgreSQL 15; runs unchanged on the embedded PGlite.

-- ISO 8601 UTC with milliseconds and Z (contract section 1), the same text on both drivers.
CREATE FUNCTION iso_time(ts timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;
COMMENT ON FUNCTION iso_time(timestamptz) IS 'Timestamp as the API shows it: ISO 8601 UTC, milliseconds, Z.';

CREATE TABLE plans (
  plan             text PRIMARY KEY CHECK (plan ~ '^[a-z]+$'),
  rank             integer NOT NULL UNIQUE CHECK (rank >= 0),
  -- NULL means unlimited (contract section 5).
  protect_per_day  integer CHECK (protect_per_day >= 0),
  execute_per_day  integer CHECK (execute_per_day >= 0),
  receipts_stored  integer CHECK (receipts_stored >= 0)
);
INSERT INTO plans (plan, rank, protect_per_day, execute_per_day, receipts_stored) VALUES
  ('free', 0, 1000, 100, 1000),
  ('pro', 1, 5000, 500, 10000),
  ('enterprise', 2, NULL, NULL, NULL);

CREATE TABLE tenants (
  tenant_id          text PRIMARY KEY CHECK (tenant_id ~ '^cust_[0-9A-Za-z]{22}$'),
  -- Stored lower-cased and trimmed, so uniqueness is case-insensitive.
  email              text NOT NULL CHECK (email = lower(btrim(email)) AND length(email) BETWEEN 3 AND 254),
  password_hash      text NOT NULL CHECK (password_hash LIKE '$2%'),
  plan               text NOT NULL DEFAULT 'free' REFERENCES plans (plan),
  email_verified_at  timestamptz,
  -- Bumped to end every session (JWTs carry the epoch they were issued under).
  session_epoch      integer NOT NULL DEFAULT 0 CHECK (session_epoch >= 0),
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tenants_email_key ON tenants (email);

CREATE TABLE api_keys (
  key_id        text PRIMARY KEY CHECK (key_id ~ '^key_[0-9A-Za-z]{22}$'),
  tenant_id     text NOT NULL REFERENCES tenants (tenant_id),
  label         text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 100),
  -- Lowercase hex SHA-256 of the whole secret; the secret itself is never stored.
  secret_hash   text NOT NULL CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
  hint          text NOT NULL CHECK (char_length(hint) = 4),
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  replaced_by   text REFERENCES api_keys (key_id),
  CONSTRAINT api_keys_revoked_at_matches_status CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);
CREATE UNIQUE INDEX api_keys_secret_hash_key ON api_keys (secret_hash);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at);

-- Keys are born active; a key moves only active -> revoked (replaced_by is set only by that
-- move); a revoked key never changes; identity columns never change; keys are never deleted.
-- Raised as SQLSTATE WK001 (docs/error_codes.md), answered as 409 key_not_active.
CREATE FUNCTION api_keys_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'api keys are never deleted' USING ERRCODE = 'WK001';
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'active' OR NEW.replaced_by IS NOT NULL THEN
      RAISE EXCEPTION 'a key is created active' USING ERRCODE = 'WK001';
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.status = 'revoked' THEN
    RAISE EXCEPTION 'key % is revoked and cannot change', OLD.key_id USING ERRCODE = 'WK001';
  END IF;
  IF NEW.key_id <> OLD.key_id OR NEW.tenant_id <> OLD.tenant_id OR NEW.secret_hash <> OLD.secret_hash
     OR NEW.hint <> OLD.hint OR NEW.created_at <> OLD.created_at THEN
    RAISE EXCEPTION 'identity columns of key % are immutable', OLD.key_id USING ERRCODE = 'WK001';
  END IF;
  IF NEW.replaced_by IS NOT NULL AND NEW.status <> 'revoked' THEN
    RAISE EXCEPTION 'only a revoked key has a replacement' USING ERRCODE = 'WK001';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER api_keys_guard BEFORE INSERT OR UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_keys_guard();

-- Secrets the service creates for itself once and shares between instances (JWT_SECRET unset).
CREATE TABLE server_secrets (
  name        text PRIMARY KEY,
  value       text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Ed25519 keys that sign receipts. Exactly one is active; retired keys stay published in the JWKS
-- so every receipt ever signed remains verifiable.
CREATE TABLE signing_keys (
  kid          text PRIMARY KEY,
  public_jwk   jsonb NOT NULL,
  private_jwk  jsonb NOT NULL,
  status       text NOT NULL CHECK (status IN ('active', 'retired')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  retired_at   timestamptz,
  CONSTRAINT signing_keys_retired_at_matches_status CHECK ((status = 'retired') = (retired_at IS NOT NULL))
);
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys ((true)) WHERE status = 'active';

CREATE FUNCTION signing_key_rotate(p_kid text, p_public jsonb, p_private jsonb) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE signing_keys SET status = 'retired', retired_at = now() WHERE status = 'active';
  INSERT INTO signing_keys (kid, public_jwk, private_jwk, status) VALUES (p_kid, p_public, p_private, 'active');
  RETURN p_kid;
END $$;
COMMENT ON FUNCTION signing_key_rotate(text, jsonb, jsonb) IS
  'Retires the active receipt signing key and activates a new one in one step; old public keys stay in the JWKS.';

-- Signup: the tenant and its first API key, together or not at all.
CREATE FUNCTION tenant_signup(
  p_tenant_id text, p_email text, p_password_hash text,
  p_key_id text, p_secret_hash text, p_hint text
) RETURNS TABLE (tenant_id text, key_id text, created_at text)
LANGUAGE plpgsql AS $$
DECLARE
  v_created timestamptz;
BEGIN
  INSERT INTO tenants (tenant_id, email, password_hash)
    VALUES (p_tenant_id, p_email, p_password_hash)
    RETURNING tenants.created_at INTO v_created;
  INSERT INTO api_keys (key_id, tenant_id, label, secret_hash, hint)
    VALUES (p_key_id, p_tenant_id, 'default', p_secret_hash, p_hint);
  RETURN QUERY SELECT p_tenant_id, p_key_id, iso_time(v_created);
END $$;
COMMENT ON FUNCTION tenant_signup(text, text, text, text, text, text) IS
  'Creates a tenant on the free plan with its first active API key, labelled "default".';
