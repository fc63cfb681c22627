-- Tests only: a tenant's key_context_epoch. $1 tenant_id
SELECT key_context_epoch FROM tenants WHERE tenant_id = $1;
