-- append_batch for items that may carry the key context they were decided under (key_epoch:
-- its tenant's key_context_epoch): stale ones are answered WR006 and not stored (receipt_append_batch_keyed,
-- migration 012). $1 json array of items
SELECT idx, seq, prev_hash, chain_hash, quota_limit, quota_used, error_sqlstate, error_constraint, error_message
FROM receipt_append_batch_keyed($1::json);
