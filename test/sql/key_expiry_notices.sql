-- Tests only: the key.expiring notices given for a key's current expires_at. $1 key_id
-- Joined by tenant too: a join a cluster runs on each shard (docs/scaling.md).
SELECT n.threshold FROM api_key_expiry_notices n
JOIN api_keys k ON k.tenant_id = n.tenant_id AND k.key_id = n.key_id AND k.expires_at = n.expires_at
WHERE n.key_id = $1 ORDER BY n.noticed_at, n.threshold;
