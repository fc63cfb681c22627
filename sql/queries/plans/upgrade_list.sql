-- A tenant's upgrade requests, newest first. $1 tenant_id
-- nullable: reviewed_at, requested_by
SELECT request_id, status, requested_plan, reason, iso_time(created_at) AS created_at,
       iso_time(reviewed_at) AS reviewed_at, review_note, requested_by
FROM upgrade_requests
WHERE tenant_id = $1
ORDER BY created_at DESC, request_id DESC;
