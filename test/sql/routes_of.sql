-- The routes that lead to a tenant (docs/scaling.md): its keys' secret hashes, its invitations'
-- token hashes, its active members' accounts. $1 tenant_id
SELECT 'key' AS kind, r.key_id AS id, r.secret_hash AS via FROM key_routes r WHERE r.tenant_id = $1
UNION ALL
SELECT 'invitation', r.invitation_id, r.token_hash FROM invitation_routes r WHERE r.tenant_id = $1
UNION ALL
SELECT 'member', r.member_id, r.account_id FROM member_routes r WHERE r.tenant_id = $1
ORDER BY 1, 2;
