-- What a call through a gateway needs besides the gateway: its key's sealed secret, its shared
-- secret and the calling member's own secret, each sealed (NULL: none).
-- $1 tenant_id, $2 gateway_id, $3 member_id of the caller
-- nullable: key_secret_sealed, secret_sealed, member_secret_sealed
SELECT key_secret_sealed, secret_sealed, member_secret_sealed FROM mcp_gateway_credentials($1::text, $2::text, $3::text);
