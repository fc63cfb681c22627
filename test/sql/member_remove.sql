-- Tests only: a member's removal through member_remove(), in a transaction a test holds open.
-- $1 tenant_id, $2 acting member_id, $3 member_id, $4 now, $5 revoke the member's keys
SELECT member_id, revoked_keys FROM member_remove($1, $2, $3, $4::timestamptz, $5::boolean);
