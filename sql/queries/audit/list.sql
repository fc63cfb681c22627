-- A page of the tenant's audit events, newest first, below a seq, of one event or of one family.
-- $1 tenant_id, $2 before seq (null: from the newest), $3 event name (null: any), $4 family prefix
-- such as 'key.' (null: any), $5 row count
-- nullable: key_id, decision, event
SELECT receipt_id, tenant_id, kind, seq, prev_hash, chain_hash, key_id, protect_receipt_id, decision,
       request_id, content_hash, iso_time(issued_at) AS timestamp, payload, signature, event
FROM receipts
WHERE tenant_id = $1 AND kind = 'event'
  AND ($2::bigint IS NULL OR seq < $2::bigint)
  AND ($3::text IS NULL OR event = $3::text)
  AND ($4::text IS NULL OR starts_with(event, $4::text))
ORDER BY seq DESC
LIMIT $5;
