-- The live member behind a JWT (no row: removed, or not this person's), with the epochs its tokens
-- must carry and whether this token was signed out. $1 tenant_id, $2 member_id, $3 account_id, $4 the token's jti
SELECT tenant_id, plan, member_id, account_id, role, member_epoch, account_epoch, signed_out, mfa_active, require_mfa
  FROM member_session($1, $2, $3, $4);
