-- Redeems a reset token and sets the password; raises WA001/WA002/WA003 on refusal.
-- $1 raw token, $2 bcrypt hash, $3 now
SELECT account_id, session_epoch FROM password_reset_confirm($1, $2, $3::timestamptz);
