-- Counts for the dashboard beside usage_summary. $1 tenant_id
-- nullable: pending_request_id, pending_plan, pending_created_at
SELECT
  (SELECT count(*) FROM api_keys k WHERE k.tenant_id = $1 AND k.status = 'active') AS keys_active,
  u.request_id AS pending_request_id, u.requested_plan AS pending_plan, iso_time(u.created_at) AS pending_created_at
FROM (SELECT 1) AS one
LEFT JOIN upgrade_requests u ON u.tenant_id = $1 AND u.status = 'pending';
