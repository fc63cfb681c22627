-- Every signing key, active first; retired public keys stay published.
SELECT kid, public_jwk, private_jwk, status FROM signing_keys ORDER BY status = 'active' DESC, created_at DESC;
