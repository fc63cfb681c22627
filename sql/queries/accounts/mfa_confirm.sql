-- $1 account_id, $2 accepted step, $3 recovery code hashes (text[]), $4 now
SELECT mfa_confirm($1, $2::bigint, $3::text[], $4::timestamptz) AS confirmed;
