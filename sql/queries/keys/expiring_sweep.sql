-- Tells of the keys crossing 7 days or 1 day before expiry: event key.expiring to the tenant's webhooks (webhook_emit()).
SELECT tenant_id, key_id, threshold, queued FROM api_keys_expiring_sweep();
