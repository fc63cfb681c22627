-- An endpoint as one delivery attempt needs it: url, status, sealed secret, the previous one while it still signs.
-- $1 webhook_id
-- nullable: secret_sealed, previous_secret_sealed
SELECT webhook_id, tenant_id, url, status, secret_sealed, previous_secret_sealed FROM webhook_for_delivery($1);
