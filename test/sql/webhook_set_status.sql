-- Tests only: moves an endpoint to a status by hand (the guard decides). $1 webhook_id, $2 status, $3 the time now (a
-- parameter: a distributed cluster refuses now() in CASE and COALESCE, docs/scaling.md)
UPDATE webhooks SET status = $2,
  disabled_at = CASE WHEN $2 = 'disabled' THEN coalesce(disabled_at, $3::timestamptz) WHEN $2 = 'active' THEN NULL ELSE disabled_at END,
  disabled_reason = CASE WHEN $2 = 'disabled' THEN coalesce(disabled_reason, 'by hand') WHEN $2 = 'active' THEN NULL ELSE disabled_reason END
WHERE webhook_id = $1 RETURNING status;
