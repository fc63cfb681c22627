-- A page of every account's sealed TOTP secret, by account id, after $1 ('' from the start); $2 rows.
-- For re-sealing under a new service secret (src/accounts/mfa.ts).
SELECT account_id, secret_sealed FROM mfa_totp WHERE account_id > $1 ORDER BY account_id LIMIT $2;
