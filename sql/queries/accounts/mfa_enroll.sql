-- $1 account_id, $2 sealed secret, $3 now
SELECT mfa_enroll($1, $2, $3::timestamptz) AS enrolled;
