-- $1 email (normalised)
SELECT tenant_id, password_hash, session_epoch FROM tenants WHERE email = $1;
