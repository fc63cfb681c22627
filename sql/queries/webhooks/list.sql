-- The tenant's live endpoints, newest first; never a secret.
-- $1 tenant_id
-- nullable: description
SELECT webhook_id, url, events, description, status, created_at FROM webhooks_list($1);
