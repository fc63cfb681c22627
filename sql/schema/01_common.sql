-- Helpers every capability uses, and the service's own secrets.
-- Written for PostgreSQL 15; runs unchanged on the embedded PGlite.

-- Stable rather than immutable: they call stable functions (to_char with a time zone,
-- convert_to), and only a function declared no stricter than its body is inlined into the
-- statements that use it.
CREATE FUNCTION iso_time(ts timestamptz) RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
AS $$ SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;
COMMENT ON FUNCTION iso_time(timestamptz) IS 'Timestamp as the API shows it: ISO 8601 UTC, milliseconds, Z.';

-- The database encoding is UTF8, so the result depends only on the argument.
CREATE FUNCTION sha256_hex(p_text text) RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE
AS $$ SELECT '0x' || encode(sha256(convert_to(p_text, 'UTF8')), 'hex') $$;
COMMENT ON FUNCTION sha256_hex(text) IS '"0x" + hex SHA-256 of the UTF-8 bytes of a text, the form every warden hash travels in.';

-- Secrets the service creates for itself once and shares between instances (JWT_SECRET unset).
CREATE TABLE server_secrets (
  name        text PRIMARY KEY,
  value       text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Ids minted inside the database (a webhook delivery queued by a procedure): base62 characters
-- from the server's strong random source, as src/ids.ts makes them in the service. Each
-- gen_random_uuid() gives 14 bytes with no fixed bits (bytes 6 and 8 carry the version and variant).
CREATE FUNCTION random_base62(p_length integer) RETURNS text
LANGUAGE plpgsql VOLATILE STRICT PARALLEL SAFE AS $$
DECLARE
  v_alphabet CONSTANT text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  v_out text := '';
  v_bytes bytea;
  v_byte integer;
BEGIN
  WHILE char_length(v_out) < p_length LOOP
    v_bytes := uuid_send(gen_random_uuid());
    FOR i IN 0..15 LOOP
      CONTINUE WHEN i IN (6, 8);
      v_byte := get_byte(v_bytes, i);
      -- 248 = 4 * 62: bytes at or above it would favour the first characters.
      IF v_byte < 248 AND char_length(v_out) < p_length THEN
        v_out := v_out || substr(v_alphabet, v_byte % 62 + 1, 1);
      END IF;
    END LOOP;
  END LOOP;
  RETURN v_out;
END $$;
COMMENT ON FUNCTION random_base62(integer) IS
  'p_length base62 characters drawn without modulo bias from gen_random_uuid()''s random bytes; 22 of them carry 130.9 bits (ids minted in SQL, like src/ids.ts''s).';
