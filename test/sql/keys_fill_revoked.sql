-- Tests only: $2 more keys of tenant $1, made active and then revoked (api_keys_guard allows only that path).
WITH made AS (
  INSERT INTO api_keys (key_id, tenant_id, label, secret_hash, hint)
  SELECT 'key_' || substr(md5(random()::text || g::text), 1, 22), $1, 'filler', md5(random()::text) || md5(random()::text), 'fill'
  FROM generate_series(1, $2::integer) AS g
  RETURNING key_id, tenant_id, secret_hash
), routed AS (
  INSERT INTO key_routes (secret_hash, tenant_id, key_id) SELECT m.secret_hash, m.tenant_id, m.key_id FROM made m
)
SELECT count(*)::integer AS made FROM made;
