-- The same TOTP secret sealed under the current service secret, only if the row still holds the
-- value that was opened (an enrolment meanwhile wins). No row: it changed. $1 account_id, $2 old sealed, $3 new sealed
UPDATE mfa_totp SET secret_sealed = $3 WHERE account_id = $1 AND secret_sealed = $2 RETURNING account_id;
