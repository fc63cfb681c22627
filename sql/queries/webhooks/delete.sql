-- Deletes an endpoint (its secrets erased, its pending deliveries failed). No row: not the tenant's live endpoint.
-- $1 tenant_id, $2 the member who deletes it, $3 webhook_id
SELECT webhook_id, url FROM webhook_delete($1, $2, $3);
