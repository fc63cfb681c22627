-- The sealed TOTP secret and the factor's state. $1 tenant_id
SELECT status, secret_sealed, last_step FROM mfa_totp WHERE tenant_id = $1;
