-- $1 request_id, $2 tenant_id, $3 requested plan, $4 reason, $5 the asking member (an owner)
-- nullable: requested_by
SELECT request_id, status, requested_plan, reason, created_at, requested_by FROM upgrade_request_create($1, $2, $3, $4, $5);
