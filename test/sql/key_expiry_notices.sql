-- Tests only: the key.expiring notices given for a key's current expires_at. $1 key_id
SELECT n.threshold FROM api_key_expiry_notices n JOIN api_keys k ON k.key_id = n.key_id AND k.expires_at = n.expires_at
WHERE n.key_id = $1 ORDER BY n.noticed_at, n.threshold;
