SELECT value FROM server_secrets WHERE name = $1;
