-- Tells of the keys crossing 7 days or 1 day before expiry (key.expiring, through webhook_emit() when installed).
SELECT tenant_id, key_id, threshold, emitted FROM api_keys_expiring_sweep();
