-- $1 kid, $2 public JWK, $3 private JWK sealed (src/crypto/secret-box.ts)
SELECT signing_key_rotate($1, $2::jsonb, $3) AS kid;
