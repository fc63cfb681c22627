-- What a call through a gateway needs besides the gateway: its key's sealed secret, its shared
-- secret and the calling member's own secret, each sealed (NULL: none).
-- $1 tenant_id, $2 gateway_id, $3 member_id of the caller
-- nullable: key_secret_sealed, secret_sealed, member_secret_sealed
SELECT g.key_secret_sealed, g.secret_sealed, s.secret_sealed AS member_secret_sealed
FROM mcp_gateways g
LEFT JOIN mcp_gateway_secrets s ON s.tenant_id = g.tenant_id AND s.gateway_id = g.gateway_id AND s.member_id = $3
WHERE g.tenant_id = $1 AND g.gateway_id = $2;
