-- Tests only: sets a tenant's key_context_epoch directly, as a stray UPDATE would. $1 tenant_id, $2 epoch
UPDATE tenants SET key_context_epoch = $2 WHERE tenant_id = $1 RETURNING key_context_epoch;
