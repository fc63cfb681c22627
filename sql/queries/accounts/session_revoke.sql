-- Signs one session out. $1 account_id, $2 jti, $3 the token's expiry, $4 now
SELECT session_revoke($1, $2, $3::timestamptz, $4::timestamptz) AS revoked;
