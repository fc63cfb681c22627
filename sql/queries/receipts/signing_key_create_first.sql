-- Only when no key is active yet; the partial unique index lets one instance win a race.
-- $1 kid, $2 public JWK, $3 private JWK sealed (src/crypto/secret-box.ts)
INSERT INTO signing_keys (kid, public_jwk, private_sealed, status)
SELECT $1, $2::jsonb, $3, 'active'
WHERE NOT EXISTS (SELECT 1 FROM signing_keys WHERE status = 'active')
ON CONFLICT DO NOTHING;
