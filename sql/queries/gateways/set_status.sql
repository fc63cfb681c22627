-- Disables or enables a live gateway (WG001 none; WT021 the role).
-- $1 tenant_id, $2 the acting member, $3 gateway_id, $4 enabled
SELECT gateway_id, status, changed FROM mcp_gateway_set_status($1, $2, $3, $4);
