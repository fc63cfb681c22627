-- $1 tenant_id
-- nullable: verified_at
SELECT email, email_verified_at IS NOT NULL AS email_verified, iso_time(email_verified_at) AS verified_at
FROM tenants WHERE tenant_id = $1;
