-- Tests only: a retired signing key of the test's own (its private half a placeholder that opens under no secret). $1 kid, $2 public JWK
INSERT INTO signing_keys (kid, public_jwk, private_sealed, status, retired_at) VALUES ($1, $2::jsonb, 'v1.AAAAAAAAAAAAAAAA.AAAA', 'retired', now())
RETURNING kid;
