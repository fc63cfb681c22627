-- The tenants a person is an active member of, with the role in each and the email of the tenant's
-- oldest owner (how a person tells the tenants apart), oldest membership first; found through the
-- person's routes (member_routes), each membership then read in its tenant. The owner is joined in
-- the statement (the one tenant_contact_email() finds), not read by a function per row: on a
-- distributed cluster such a function would run on the shards (docs/scaling.md). $1 account_id
SELECT m.tenant_id, m.role, m.member_id, iso_time(m.joined_at) AS joined_at, c.email AS contact_email
  FROM member_routes r
  JOIN members m ON m.tenant_id = r.tenant_id AND m.member_id = r.member_id
  LEFT JOIN (
    -- Each tenant's oldest active owner: no active owner joined before it.
    SELECT o.tenant_id, a.email
      FROM members o JOIN accounts a ON a.account_id = o.account_id
     WHERE o.role = 'owner' AND o.status = 'active'
       AND NOT EXISTS (SELECT 1 FROM members e
                        WHERE e.tenant_id = o.tenant_id AND e.role = 'owner' AND e.status = 'active'
                          AND (e.joined_at, e.member_id) < (o.joined_at, o.member_id))
  ) c ON c.tenant_id = m.tenant_id
 WHERE r.account_id = $1 AND m.status = 'active'
 ORDER BY m.joined_at, m.member_id;
