-- Ends every session of a tenant: JWTs issued under an older epoch stop working. $1 tenant_id
UPDATE tenants SET session_epoch = session_epoch + 1 WHERE tenant_id = $1 RETURNING session_epoch;
