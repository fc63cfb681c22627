-- valid, invalid_token, token_expired or token_used; redeems nothing. $1 raw token, $2 purpose, $3 now
SELECT auth_token_check($1, $2, $3::timestamptz) AS outcome;
