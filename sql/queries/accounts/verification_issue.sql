-- A new verification token (older ones stop working) and its email queued, in one step.
-- mail_id is NULL when the address is already verified.
-- $1 account_id, $2 raw token (only its hash is kept), $3 the token sealed (for the mail), $4 now
-- nullable: mail_id
SELECT email_verification_issue($1, $2, $3, $4::timestamptz) AS mail_id;
