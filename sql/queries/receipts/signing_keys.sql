-- Every signing key, active first; retired public keys stay published, with their compromise mark.
SELECT kid, public_jwk, private_sealed, status, iso_time(compromised_since) AS compromised_since
FROM signing_keys ORDER BY status = 'active' DESC, created_at DESC;
