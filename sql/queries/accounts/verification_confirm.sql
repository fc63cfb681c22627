-- Redeems a verification token; raises WA001/WA002/WA003 on refusal. $1 raw token, $2 now
SELECT account_id, verified_at FROM email_verification_confirm($1, $2::timestamptz);
