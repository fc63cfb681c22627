-- Raises WA004 when the stored hash is no longer $2. $1 account_id, $2 current bcrypt hash, $3 new bcrypt hash, $4 now
SELECT password_change($1, $2, $3, $4::timestamptz) AS session_epoch;
