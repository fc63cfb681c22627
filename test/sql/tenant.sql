-- Tests only: one tenant's stored row, without the password hash. $1 tenant_id
SELECT tenant_id, email, plan, session_epoch, iso_time(created_at) AS created_at FROM tenants WHERE tenant_id = $1;
