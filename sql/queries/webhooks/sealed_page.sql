-- Live endpoints' sealed secrets after a (tenant, webhook id) position, in key order (the reseal when JWT_SECRET changed).
-- $1 tenant_id and $2 webhook_id of the last endpoint of the previous page ('' and '' for the first), $3 limit
-- nullable: secret_sealed, previous_secret_sealed
SELECT tenant_id, webhook_id, secret_sealed, previous_secret_sealed FROM webhooks_sealed_page($1, $2, $3::integer);
