-- Tests only: holds a tenant's receipt log head until the caller's transaction ends, so that an
-- append of that tenant waits (a request kept in flight on purpose). $1 tenant_id
SELECT tenant_id, tree_size FROM receipt_heads WHERE tenant_id = $1 FOR UPDATE;
