-- The key behind a secret and what its request needs (see api_key_context). $1 secret SHA-256 hex
SELECT key_id, tenant_id, status, plan, policy_id, policy_version, policy_hash, verdicts FROM api_key_context($1);
