-- The chain hashes (hex, without 0x, concatenated in seq order) of the tenant's receipts with
-- $2 <= seq < $3, and how many there are: a level-0 tile's leaves or an entry bundle (at most 256).
-- Read as an ordered range with a limit, which only (tenant_id, seq) serves without a sort, so a
-- plan kept from a nearly empty table cannot read the tenant's log through the primary key.
-- $1 tenant_id, $2 first seq, $3 end seq
SELECT count(*)::integer AS count, coalesce(string_agg(substr(t.chain_hash, 3), '' ORDER BY t.seq), '') AS hex
FROM (
  SELECT r.seq, r.chain_hash FROM receipts r
  WHERE r.tenant_id = $1 AND r.seq >= $2::bigint AND r.seq < $3::bigint
  ORDER BY r.seq LIMIT 256
) t;
