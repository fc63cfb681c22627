-- $1 channel, $2 how many, $3 lease seconds
-- nullable: tenant_id
SELECT id, kind, recipient, tenant_id, data, attempts FROM outbox_claim($1, $2, $3);
