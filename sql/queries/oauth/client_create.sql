-- A client registered by RFC 7591 (POST /oauth/register).
-- $1 client_id, $2 client_name, $3 redirect_uris, $4 client_uri
INSERT INTO oauth_clients (client_id, client_name, redirect_uris, client_uri)
VALUES ($1, $2, $3, $4)
RETURNING client_id, client_name, redirect_uris, client_uri, created_at;
