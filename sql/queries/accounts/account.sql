-- The account as GET /customer/account shows it (mfa_enabled: a second factor is active). $1 tenant_id
SELECT t.tenant_id, t.email, t.email_verified_at IS NOT NULL AS email_verified, t.plan, iso_time(t.created_at) AS created_at,
       EXISTS (SELECT 1 FROM mfa_totp m WHERE m.tenant_id = t.tenant_id AND m.status = 'active') AS mfa_enabled
FROM tenants t WHERE t.tenant_id = $1;
