-- Test only: the mail queued for a tenant, oldest first. $1 tenant_id
SELECT kind, recipient, data FROM outbox WHERE channel = 'mail' AND tenant_id = $1 ORDER BY id;
