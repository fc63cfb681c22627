-- $1 kid, $2 public JWK, $3 private JWK
SELECT signing_key_rotate($1, $2::jsonb, $3::jsonb) AS kid;
