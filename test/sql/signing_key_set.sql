-- Tests only: a signing key's state written directly, as an operator with psql could. $1 kid, $2 status, $3 compromised_since,
-- $4 the time now (a parameter: a distributed cluster refuses now() in COALESCE, docs/scaling.md)
UPDATE signing_keys SET status = $2, retired_at = CASE WHEN $2 = 'retired' THEN coalesce(retired_at, $4::timestamptz) END, compromised_since = $3::timestamptz
WHERE kid = $1
RETURNING kid;
