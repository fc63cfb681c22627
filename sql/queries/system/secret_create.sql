-- Keeps the first value any instance offers. $1 name, $2 value
INSERT INTO server_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING;
