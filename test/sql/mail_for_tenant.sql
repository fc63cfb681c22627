-- Test only: the mail intents queued for a tenant, oldest first. $1 tenant_id
SELECT kind, to_email, data FROM mail_outbox WHERE tenant_id = $1 ORDER BY id;
