-- A new verification token (older ones stop working) and its email queued, in one step.
-- mail_id is NULL when the address is already verified. $1 tenant_id, $2 raw token, $3 now
-- nullable: mail_id
SELECT email_verification_issue($1, $2, $3::timestamptz) AS mail_id;
