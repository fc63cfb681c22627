-- Ends every session of a person, in every tenant: JWTs issued under an older epoch stop working. $1 account_id
UPDATE accounts SET session_epoch = session_epoch + 1 WHERE account_id = $1 RETURNING session_epoch;
