-- One row (account_id, the tenant of its last session, mail_id) for a registered email, none otherwise.
-- $1 email (normalised), $2 raw token (only its hash is kept), $3 the token sealed (for the mail), $4 now
-- nullable: tenant_id
SELECT account_id, tenant_id, mail_id FROM password_reset_request($1, $2, $3, $4::timestamptz);
