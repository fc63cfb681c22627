-- $1 request_id, $2 tenant_id, $3 requested plan, $4 reason
SELECT request_id, status, requested_plan, reason, created_at FROM upgrade_request_create($1, $2, $3, $4);
