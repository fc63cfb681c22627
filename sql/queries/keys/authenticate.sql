-- The keys behind a batch of secrets and what their requests need (see api_key_contexts).
-- $1 jsonb array of secret SHA-256 hex
-- nullable: policy_id, policy_version, policy_hash
SELECT secret_hash, key_id, tenant_id, status, plan, policy_id, policy_version, policy_hash, features, verdicts, required_plans
FROM api_key_contexts($1::jsonb);
