-- Mark a receipt signing key compromised since a time (ISO 8601, with its zone): the JWKS then
-- publishes `compromised_since` on that key and every verifier refuses its signatures of that
-- instant or later. An active key is retired at once; the service makes a new one when it next
-- loads its key (within a minute), or `warden ops signing-key revoke` makes it at once.
--   psql "$DATABASE_URL" -v kid=... -v compromised_since=2026-01-01T00:00:00Z -f sql/ops/signing_key_revoke.sql
\set ON_ERROR_STOP on
SELECT kid, status, retired_at, compromised_since FROM signing_key_revoke(:'kid', :'compromised_since');
