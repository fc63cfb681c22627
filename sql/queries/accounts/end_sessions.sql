-- Ends every session of a tenant: JWTs issued under an older epoch stop working. $1 tenant_id
SELECT tenant_sessions_end($1) AS session_epoch;
