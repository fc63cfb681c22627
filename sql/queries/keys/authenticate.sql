-- The keys behind a batch of secrets and what their requests need (see api_key_contexts), with
-- each tenant's key_context_epoch. The epoch is read by this statement's snapshot (a STABLE
-- function reads with its caller's), taken before the function's statements take theirs: a
-- change committed in between leaves an epoch older than the context, which costs one more lookup
-- later, never a stale answer. Read through tenant_key_context_epochs(), whose kept plan probes.
-- $1 jsonb array of secret SHA-256 hex
-- nullable: policy_id, policy_version, policy_hash, expires_ms, actions, protect_per_day, per_second, burst, allowed_ips, overlap_ms
SELECT c.secret_hash, c.key_id, c.tenant_id, c.status, c.plan, c.policy_id, c.policy_version, c.policy_hash,
       c.features, c.verdicts, c.required_plans, c.expires_ms, c.enabled, c.actions, c.protect_per_day, c.per_second,
       c.burst, c.allowed_ips, c.overlap_ms, t.key_context_epoch
FROM api_key_contexts($1::jsonb) c
CROSS JOIN LATERAL tenant_key_context_epochs(ARRAY[c.tenant_id]) t;
