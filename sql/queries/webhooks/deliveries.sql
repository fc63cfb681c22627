-- A page of an endpoint's deliveries, newest first, before a position (WH004: not the tenant's live endpoint).
-- $1 tenant_id, $2 webhook_id, $3 page_position of the last delivery of the previous page or NULL, $4 limit
-- nullable: last_status_code, last_error, next_attempt_at
SELECT delivery_id, event, status, attempts, last_status_code, last_error, next_attempt_at, created_at, page_position
FROM webhook_deliveries_page($1, $2, $3::bigint, $4::integer);
