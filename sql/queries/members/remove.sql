-- WT001 unknown member, WT020/WT021 the actor's role, WT003 the last owner. revoked_keys / kept_keys: the keys the
-- member created that still work, [{key_id, label, hint}], revoked (with $5 or the tenant's setting) or left working.
-- $1 tenant_id, $2 acting member_id, $3 member_id, $4 now, $5 revoke the member's keys
SELECT member_id, role, revoked_keys, kept_keys FROM member_remove($1, $2, $3, $4::timestamptz, $5::boolean);
