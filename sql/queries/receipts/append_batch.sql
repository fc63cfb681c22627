-- Stores several decisions in one call and one commit. $1 json array of items, each with an optional
-- claimed link (see receipt_append_batch, migration 010)
SELECT idx, seq, prev_hash, chain_hash, quota_limit, quota_used, error_sqlstate, error_constraint, error_message
FROM receipt_append_batch($1::json);
