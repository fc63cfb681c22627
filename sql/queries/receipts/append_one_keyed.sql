-- append_one for an item that may carry the key context it was decided under: raises WR006 (nothing
-- stored) when its tenant's key_context_epoch has moved (receipt_append_item_keyed, migration 012). $1 jsonb item
SELECT seq, prev_hash, chain_hash, quota_limit, quota_used
FROM receipt_append_item_keyed($1::jsonb);
