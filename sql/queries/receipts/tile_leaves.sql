-- The chain hashes (hex, without 0x, concatenated in seq order) of the tenant's receipts with
-- $2 <= seq < $3, and how many there are: a level-0 tile's leaves or an entry bundle (at most 256).
-- $1 tenant_id, $2 first seq, $3 end seq
SELECT count(*)::integer AS count, coalesce(string_agg(substr(r.chain_hash, 3), '' ORDER BY r.seq), '') AS hex
FROM receipts r
WHERE r.tenant_id = $1 AND r.seq >= $2::bigint AND r.seq < $3::bigint;
