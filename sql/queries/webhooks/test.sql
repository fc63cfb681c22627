-- Queues a webhook.test event to one endpoint (WH003 when it is disabled, WH006 beyond 60 an hour). No row: not the tenant's live endpoint.
-- $1 tenant_id, $2 the member who asks, $3 webhook_id
SELECT delivery_id FROM webhook_test($1, $2, $3);
