-- The account as GET /customer/account shows it: the person's email and second factor, the tenant's
-- plan and creation time, and the member's role. $1 tenant_id, $2 member_id
SELECT t.tenant_id, a.email, a.email_verified_at IS NOT NULL AS email_verified, t.plan, iso_time(t.created_at) AS created_at,
       EXISTS (SELECT 1 FROM mfa_totp m WHERE m.account_id = a.account_id AND m.status = 'active') AS mfa_enabled,
       mb.member_id, mb.role
FROM members mb JOIN accounts a ON a.account_id = mb.account_id JOIN tenants t ON t.tenant_id = mb.tenant_id
WHERE mb.tenant_id = $1 AND mb.member_id = $2;
