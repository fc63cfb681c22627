-- $1 account_id, $2 now
SELECT mfa_disable($1, $2::timestamptz) AS disabled;
