-- The tenants a person is an active member of, with the role in each and the email of the tenant's
-- oldest owner (how a person tells the tenants apart), oldest membership first; found through the
-- person's routes (member_routes), each membership then read in its tenant. $1 account_id
SELECT m.tenant_id, m.role, m.member_id, iso_time(m.joined_at) AS joined_at, tenant_contact_email(m.tenant_id) AS contact_email
  FROM member_routes r
  JOIN members m ON m.tenant_id = r.tenant_id AND m.member_id = r.member_id
 WHERE r.account_id = $1 AND m.status = 'active'
 ORDER BY m.joined_at, m.member_id;
