-- $1 account_id
-- nullable: verified_at
SELECT email, email_verified_at IS NOT NULL AS email_verified, iso_time(email_verified_at) AS verified_at
FROM accounts WHERE account_id = $1;
