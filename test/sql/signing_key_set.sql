-- Tests only: a signing key's state written directly, as an operator with psql could. $1 kid, $2 status, $3 compromised_since
UPDATE signing_keys SET status = $2, retired_at = CASE WHEN $2 = 'retired' THEN coalesce(retired_at, now()) END, compromised_since = $3::timestamptz
WHERE kid = $1
RETURNING kid;
