-- WT001 unknown member, WT020/WT021 the actor's role, WT003 the last owner, 22023 unknown role.
-- $1 tenant_id, $2 acting member_id, $3 member_id, $4 role
SELECT member_id, role, old_role FROM member_set_role($1, $2, $3, $4);
