-- The tenant's active members, oldest first, with whether each has a second factor on and the keys each created
-- that still work ([{key_id, label, hint, created_at}], oldest first: active, or rotated with an overlap running, as
-- api_keys_of_member() finds them). The keys are read in this statement, naming the tenant, not by a function per
-- row, which a distributed cluster would run on the shards (docs/scaling.md). $1 tenant_id
SELECT m.member_id, a.email, m.role, iso_time(m.joined_at) AS joined_at,
       EXISTS (SELECT 1 FROM mfa_totp f WHERE f.account_id = a.account_id AND f.status = 'active') AS mfa_enabled,
       (SELECT coalesce(jsonb_agg(jsonb_build_object('key_id', k.key_id, 'label', k.label, 'hint', k.hint, 'created_at', iso_time(k.created_at))
                                  ORDER BY k.created_at, k.key_id), '[]'::jsonb)
          FROM api_keys k
         WHERE k.tenant_id = $1 AND k.created_by = m.member_id AND (k.status = 'active' OR k.overlap_until > now())) AS keys
  FROM members m JOIN accounts a ON a.account_id = m.account_id
 WHERE m.tenant_id = $1 AND m.status = 'active'
 ORDER BY m.joined_at, m.member_id;
