-- Tests only: approves a pending upgrade request straight in SQL, with no email or audit event (see
-- plan_set_as_approved.sql). $1 tenant_id, $2 request_id
UPDATE upgrade_requests SET status = 'approved', reviewed_at = now(), reviewed_by = 'tests'
WHERE tenant_id = $1 AND request_id = $2
RETURNING request_id;
