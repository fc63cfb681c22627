-- Stores signed audit events as their tenants' next receipts (see receipt_event_append); call it in
-- the transaction of the change the events record. One row per event, in input order.
-- $1 json array of {receipt_id, tenant_id, request_id, timestamp, payload, content_hash, signature}
-- nullable: prev_hash
SELECT receipt_id, seq, prev_hash, chain_hash FROM receipt_event_append($1::json);
