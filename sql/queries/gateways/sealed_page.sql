-- Live gateways' sealed secrets after a (tenant, gateway id) position, in key order (the reseal when JWT_SECRET changed).
-- $1 tenant_id and $2 gateway_id of the last gateway of the previous page ('' and '' for the first), $3 limit
-- nullable: key_secret_sealed, secret_sealed
SELECT tenant_id, gateway_id, key_secret_sealed, secret_sealed FROM mcp_gateways_sealed_page($1, $2, $3::integer);
