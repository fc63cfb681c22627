-- $1 tenant_id, $2 request_id. No row: not this tenant's request.
SELECT request_id, status, requested_plan FROM upgrade_request_cancel($1, $2);
