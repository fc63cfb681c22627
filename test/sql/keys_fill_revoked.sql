-- Tests only: $2 more keys of tenant $1, made active and then revoked (api_keys_guard allows only that path).
WITH made AS (
  INSERT INTO api_keys (key_id, tenant_id, label, secret_hash, hint)
  SELECT 'key_' || substr(md5(random()::text || g::text), 1, 22), $1, 'filler', md5(random()::text) || md5(random()::text), 'fill'
  FROM generate_series(1, $2::integer) AS g
  RETURNING key_id, tenant_id, secret_hash
)
-- Each routed as the procedures route a key (key_route_add()).
SELECT count(*)::integer AS made FROM made m CROSS JOIN LATERAL key_route_add(m.tenant_id, m.key_id, m.secret_hash);
