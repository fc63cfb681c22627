-- An mfa_token gives one session: WA006 when its jti was already spent. $1 account_id, $2 jti, $3 the token's expiry
SELECT mfa_challenge_spend($1, $2, $3::timestamptz) AS spent;
