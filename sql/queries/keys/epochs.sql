-- Each tenant's key_context_epoch (migration 012), for checking key contexts read earlier: an
-- epoch that has not moved means nothing the context depends on has changed. $1 text[] tenant_id
SELECT tenant_id, key_context_epoch FROM tenants WHERE tenant_id = ANY ($1::text[]);
