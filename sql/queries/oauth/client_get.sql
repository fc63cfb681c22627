-- A registered client by its id; no row: none.
-- $1 client_id
SELECT client_id, client_name, redirect_uris, client_uri
FROM oauth_clients
WHERE client_id = $1;
