-- Tests only: a retired signing key of the test's own. $1 kid, $2 public JWK, $3 private JWK
INSERT INTO signing_keys (kid, public_jwk, private_jwk, status, retired_at) VALUES ($1, $2::jsonb, $3::jsonb, 'retired', now())
RETURNING kid;
