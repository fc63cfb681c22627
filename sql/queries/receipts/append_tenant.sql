-- receipts/append for items that are all of one tenant, named in $1: on a Citus cluster the call runs
-- whole on that tenant's worker (receipt_append_tenant()). One row per item, as receipts/append;
-- 22023 when an item is of another tenant.
-- $1 tenant_id of every item, $2 json array of items as in receipts/append
-- nullable: seq, prev_hash, chain_hash, quota_limit, quota_used, refusal, approval
SELECT idx, seq, prev_hash, chain_hash, quota_limit, quota_used, refusal, approval FROM receipt_append_tenant($1, $2::json);
