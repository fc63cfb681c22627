-- A page of every tenant's sealed TOTP secret, by tenant id, after $1 ('' from the start); $2 rows.
-- For re-sealing under a new service secret (src/accounts/mfa.ts).
SELECT tenant_id, secret_sealed FROM mfa_totp WHERE tenant_id > $1 ORDER BY tenant_id LIMIT $2;
