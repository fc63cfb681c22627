-- One active member of the tenant as the members list shows it; no row: unknown, removed or another tenant's. $1 tenant_id, $2 member_id
SELECT m.member_id, a.email, m.role, iso_time(m.joined_at) AS joined_at,
       EXISTS (SELECT 1 FROM mfa_totp f WHERE f.account_id = a.account_id AND f.status = 'active') AS mfa_enabled
  FROM members m JOIN accounts a ON a.account_id = m.account_id
 WHERE m.tenant_id = $1 AND m.member_id = $2 AND m.status = 'active';
