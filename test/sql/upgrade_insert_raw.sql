-- Test only: an insert that skips upgrade_request_create(). $1 request_id, $2 tenant_id, $3 from_plan, $4 requested_plan, $5 status
INSERT INTO upgrade_requests (request_id, tenant_id, from_plan, requested_plan, reason, status, reviewed_at, reviewed_by)
VALUES ($1, $2, $3, $4, 'raw', $5, CASE WHEN $5 IN ('approved', 'rejected') THEN now() END, CASE WHEN $5 IN ('approved', 'rejected') THEN 'sql' END)
RETURNING request_id;
