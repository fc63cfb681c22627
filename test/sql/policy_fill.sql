-- Stores custom policy versions 2 .. $2 of tenant $1 at once (small distinct documents), to reach the cap quickly.
INSERT INTO policies (tenant_id, version, policy_id, document, hash)
SELECT $1, v, 'pol_' || substr($1, 6), doc, sha256_hex(doc)
FROM generate_series(2, $2::integer) AS v,
     LATERAL (SELECT '{"default_effect":"deny","default_reason":"filler_' || v || '","rules":[]}' AS doc) d
RETURNING version;
