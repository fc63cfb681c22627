-- The account as GET /customer/account shows it. $1 tenant_id
SELECT tenant_id, email, email_verified_at IS NOT NULL AS email_verified, plan, iso_time(created_at) AS created_at
FROM tenants WHERE tenant_id = $1;
