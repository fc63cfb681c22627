-- The sealed TOTP secret and the factor's state. $1 account_id
SELECT status, secret_sealed, last_step FROM mfa_totp WHERE account_id = $1;
