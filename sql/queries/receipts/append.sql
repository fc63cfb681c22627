-- Stores decisions as their tenants' next receipts and counts them against the plans, in one call
-- and one commit (see receipt_append). One row per item, idx 0-based in input order; refusal NULL
-- when stored, else its code (WR002, WR003, WR004, WR007, WR010, WR011, WB002, WQ001, WQ002, WQ003,
-- WQ004); approval: the approval a retried protect answers instead of opening one (else NULL).
-- $1 json array of {receipt_id, tenant_id, key_id, kind, request_id, timestamp, decision, payload,
-- content_hash, signature, protect_receipt_id, approval (the approval a protect opens, or null),
-- usage (a decision on usage counters: [{counter, scope, window_start, before, add}], or null)}
-- nullable: seq, prev_hash, chain_hash, quota_limit, quota_used, refusal, approval
SELECT idx, seq, prev_hash, chain_hash, quota_limit, quota_used, refusal, approval FROM receipt_append($1::json);
