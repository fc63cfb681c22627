-- $1 email (normalised). mfa_active: login asks for the second factor before a session.
SELECT a.account_id, a.password_hash, a.session_epoch,
       EXISTS (SELECT 1 FROM mfa_totp m WHERE m.account_id = a.account_id AND m.status = 'active') AS mfa_active
  FROM accounts a WHERE a.email = $1;
