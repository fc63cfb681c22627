-- Replaces a member's sealed upstream secret by the same secret sealed under the new service secret, if still the one read.
-- $1 tenant_id, $2 gateway_id, $3 member_id, $4 secret_sealed read, $5 the same sealed anew
SELECT mcp_gateway_secret_reseal($1, $2, $3, $4, $5) AS resealed;
