-- $1 account_id, $2 TOTP step (or null), $3 recovery code hash (or null), $4 now
SELECT mfa_accept_code($1, $2::bigint, $3, $4::timestamptz) AS accepted;
