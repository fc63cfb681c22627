-- WT020/WT021 the actor's role, WT005 cap, WT006 already a member, 22023 unknown role.
-- $1 invitation_id, $2 tenant_id, $3 acting member_id, $4 email (normalised), $5 role, $6 raw token (only its hash is kept),
-- $7 the token sealed (for the mail), $8 the mail's other data (jsonb), $9 now
SELECT invitation_id, email, role, created_at, expires_at FROM member_invite($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::timestamptz);
