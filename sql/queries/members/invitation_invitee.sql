-- Whom a pending invitation is for, and the account its email already has (NULL account_id: none).
-- WA001 unknown or revoked, WA002 expired, WA003 used. $1 raw token, $2 now
-- nullable: account_id, password_hash
SELECT invitation_id, tenant_id, email, role, expires_at, account_id, password_hash, mfa_active
  FROM member_invitation_invitee($1, $2::timestamptz);
