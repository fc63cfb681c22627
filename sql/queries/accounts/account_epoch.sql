-- The session epoch a person's tokens must carry. $1 account_id
SELECT account_id, session_epoch FROM accounts WHERE account_id = $1;
