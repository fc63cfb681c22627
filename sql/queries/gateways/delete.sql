-- Deletes a live gateway for good, its secrets erased and its key revoked (WG001 none; WT021 the role).
-- $1 tenant_id, $2 the acting member, $3 gateway_id
SELECT gateway_id, name, key_id FROM mcp_gateway_delete($1, $2, $3);
