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
