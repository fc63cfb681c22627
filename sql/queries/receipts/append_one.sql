-- Stores one decision in its own call and commit: what a batch of one item does, without the set
-- machinery (the batcher uses it when a batch holds one item). $1 jsonb item (receipt_append's
-- arguments by name); a refusal raises, as receipt_append() does.
SELECT seq, prev_hash, chain_hash, quota_limit, quota_used
FROM receipt_append_item($1::jsonb);
