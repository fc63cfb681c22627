-- A remote gateway for OAuth tests, made by the gateways' own procedure as an operator would (no
-- member: NULL), with its key and its route.
-- $1 gateway_id, $2 tenant_id, $3 name
SELECT gateway_id, $2::text AS tenant_id
FROM mcp_gateway_create($1, $2, NULL, $3, 'https://upstream.example/mcp', 'none', NULL,
                        'key_' || substr(md5($1), 1, 22), md5($1) || md5($3), 'test', 'not-a-sealed-secret');
