-- One row (tenant_id, mail_id) for a registered email, none otherwise. $1 email (normalised), $2 raw token, $3 now
SELECT tenant_id, mail_id FROM password_reset_request($1, $2, $3::timestamptz);
