-- WA001 unknown or revoked, WA002 expired, WA003 used, WT004 cap, WT006 already a member, WT008 another email,
-- WT009 a new person whose email has an account.
-- $1 raw token, $2 the signed-in person's account_id (NULL: a new person), $3 a new account_id, $4 the new person's bcrypt hash,
-- $5 the new member_id, $6 now
SELECT tenant_id, member_id, account_id, role, email, invitation_id, new_account
  FROM member_invitation_accept($1, $2, $3, $4, $5, $6::timestamptz);
