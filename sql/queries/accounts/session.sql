-- The tenant behind a JWT, with the epoch its sessions must carry and whether this token was
-- signed out. $1 tenant_id, $2 the token's jti
SELECT s.tenant_id, s.plan, s.session_epoch,
       EXISTS (SELECT 1 FROM session_revocations r WHERE r.jti = $2) AS signed_out
  FROM tenant_session($1) s;
