-- The tenant's active members, oldest first, with whether each has a second factor on and the keys each created
-- that still work (api_keys_of_member(): [{key_id, label, hint, created_at}], oldest first). $1 tenant_id
SELECT m.member_id, a.email, m.role, iso_time(m.joined_at) AS joined_at,
       EXISTS (SELECT 1 FROM mfa_totp f WHERE f.account_id = a.account_id AND f.status = 'active') AS mfa_enabled,
       (SELECT coalesce(jsonb_agg(jsonb_build_object('key_id', k.key_id, 'label', k.label, 'hint', k.hint, 'created_at', iso_time(k.created_at))
                                  ORDER BY k.created_at, k.key_id), '[]'::jsonb)
          FROM api_keys_of_member(m.tenant_id, m.member_id, false) k) AS keys
  FROM members m JOIN accounts a ON a.account_id = m.account_id
 WHERE m.tenant_id = $1 AND m.status = 'active'
 ORDER BY m.joined_at, m.member_id;
