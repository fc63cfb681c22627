-- What a password change checks the current password against. $1 tenant_id
SELECT email, password_hash FROM tenants WHERE tenant_id = $1;
