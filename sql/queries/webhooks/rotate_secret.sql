-- A new sealed secret for an endpoint; the replaced one signs beside it for 24 h. No row: not the tenant's live endpoint.
-- $1 tenant_id, $2 the member who rotates it, $3 webhook_id, $4 the new sealed secret
SELECT webhook_id, previous_secret_until FROM webhook_rotate_secret($1, $2, $3, $4);
