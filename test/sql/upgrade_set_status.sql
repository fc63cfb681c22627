-- Test only: a direct status change, as a careless operator might try. $1 request_id, $2 status
UPDATE upgrade_requests SET status = $2, reviewed_at = now(), reviewed_by = 'sql', review_note = 'direct',
  cancelled_at = CASE WHEN $2 = 'cancelled' THEN now() END
WHERE request_id = $1 RETURNING request_id, status;
