-- WT001 unknown member, WT020/WT021 the actor's role, WT003 the last owner. $1 tenant_id, $2 acting member_id, $3 member_id, $4 now
SELECT member_id, role FROM member_remove($1, $2, $3, $4::timestamptz);
