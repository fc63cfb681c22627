-- WT001 unknown, WT021 the actor's role, WT007 not pending. $1 tenant_id, $2 acting member_id, $3 invitation_id, $4 now
SELECT invitation_id, email, role FROM member_invitation_revoke($1, $2, $3, $4::timestamptz);
