-- Test only: a direct status change, as a careless operator might try. $1 request_id, $2 status
-- now() kept out of CASE and COALESCE (a NULL interval makes the sum NULL), which a distributed
-- cluster refuses there (docs/scaling.md).
UPDATE upgrade_requests SET status = $2, reviewed_at = now(), reviewed_by = 'sql', review_note = 'direct',
  cancelled_at = now() + CASE WHEN $2 = 'cancelled' THEN interval '0' END
WHERE request_id = $1 RETURNING request_id, status;
