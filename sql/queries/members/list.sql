-- The tenant's active members, oldest first, with whether each has a second factor on. $1 tenant_id
SELECT m.member_id, a.email, m.role, iso_time(m.joined_at) AS joined_at,
       EXISTS (SELECT 1 FROM mfa_totp f WHERE f.account_id = a.account_id AND f.status = 'active') AS mfa_enabled
  FROM members m JOIN accounts a ON a.account_id = m.account_id
 WHERE m.tenant_id = $1 AND m.status = 'active'
 ORDER BY m.joined_at, m.member_id;
