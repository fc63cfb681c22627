-- Tests only: $2 in-progress Idempotency-Key records of tenant $1, made now.
INSERT INTO idempotency_keys (tenant_id, key_hash, fingerprint)
SELECT $1, md5(g::text || $1) || md5($1 || g::text), repeat('f', 64) FROM generate_series(1, $2::integer) AS g
RETURNING 1 AS made;
