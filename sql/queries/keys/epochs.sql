-- The key_context_epoch of each tenant named. $1 text[] of tenant_id
SELECT tenant_id, key_context_epoch FROM tenant_key_context_epochs($1::text[]);
