-- Tests only: an endpoint's stored row, secrets as stored (sealed). $1 webhook_id
SELECT webhook_id, tenant_id, url, events, status, secret_sealed, previous_secret_sealed,
       iso_time(previous_secret_until) AS previous_secret_until, disabled_reason,
       iso_time(disabled_at) AS disabled_at, iso_time(deleted_at) AS deleted_at, created_by, deleted_by
FROM webhooks WHERE webhook_id = $1;
