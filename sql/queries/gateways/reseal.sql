-- Replaces a gateway's sealed secrets by the same secrets sealed under the new service secret, if still the ones read.
-- $1 tenant_id, $2 gateway_id, $3 key_secret_sealed read, $4 secret_sealed read, $5 and $6 the same sealed anew
SELECT mcp_gateway_reseal($1, $2, $3, $4, $5, $6) AS resealed;
