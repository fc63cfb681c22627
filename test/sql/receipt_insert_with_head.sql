-- Tests only: receipts written by hand as receipt_log_store() writes them, in one statement: the
-- tenant's head moved first ($2 tree_size, $3 head_hash; event_count kept), then the rows of $1 (as
-- receipt_insert_raw takes them, all of one tenant) inserted; receipts_link_guard decides.
WITH moved AS (
  UPDATE receipt_heads h SET tree_size = $2, head_hash = $3
  WHERE h.tenant_id = ($1::jsonb -> 0 ->> 'tenant_id')
  RETURNING h.tenant_id
)
INSERT INTO receipts (receipt_id, tenant_id, kind, key_id, request_id, issued_at, decision, payload, content_hash, signature, seq, prev_hash, chain_hash, protect_receipt_id)
SELECT r.receipt_id, r.tenant_id, coalesce(r.kind, 'protect'), r.key_id, r.request_id, r.timestamp::timestamptz, r.decision, r.payload, r.content_hash, 'a.b.c',
       r.seq, r.prev_hash, r.chain_hash, r.protect_receipt_id
FROM jsonb_to_recordset($1::jsonb) AS r(receipt_id text, tenant_id text, kind text, key_id text, request_id text, timestamp text, decision text,
                                        payload text, content_hash text, seq bigint, prev_hash text, chain_hash text, protect_receipt_id text)
CROSS JOIN (SELECT count(*) FROM moved) m
RETURNING seq, prev_hash, chain_hash;
