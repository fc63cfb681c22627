-- An endpoint as one delivery attempt needs it: url, status, sealed secret, the previous one while it still signs.
-- $1 tenant_id, $2 webhook_id (the outbox row's tenant and recipient)
-- nullable: secret_sealed, previous_secret_sealed
SELECT webhook_id, tenant_id, url, status, secret_sealed, previous_secret_sealed FROM webhook_for_delivery($1, $2);
