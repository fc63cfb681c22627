-- $1 how many, $2 lease seconds
-- nullable: tenant_id
SELECT id, kind, to_email, tenant_id, data, attempts FROM mail_outbox_claim($1, $2);
