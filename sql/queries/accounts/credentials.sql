-- What a password change checks the current password against. $1 account_id
SELECT email, password_hash FROM accounts WHERE account_id = $1;
