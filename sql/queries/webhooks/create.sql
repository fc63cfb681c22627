-- A new active endpoint of the tenant (WH002 beyond the cap; WT021 the member's role).
-- $1 webhook_id, $2 tenant_id, $3 the member who makes it, $4 url, $5 events (text[]), $6 description or NULL, $7 sealed secret
-- nullable: description
SELECT webhook_id, url, events, description, status, created_at
FROM webhook_create($1, $2, $3, $4, $5::text[], $6, $7);
