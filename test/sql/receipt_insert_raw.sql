-- Tests only: receipts written straight into the table, bypassing receipt_append(), claiming the
-- links they carry; receipts_link_guard refuses them (their head does not cover them). One row per element of $1, a jsonb array of
-- {receipt_id, tenant_id, key_id, request_id, timestamp, decision, payload, content_hash, seq, prev_hash, chain_hash}
-- and optionally kind (protect when absent) and protect_receipt_id.
INSERT INTO receipts (receipt_id, tenant_id, kind, key_id, request_id, issued_at, decision, payload, content_hash, signature, seq, prev_hash, chain_hash, protect_receipt_id)
SELECT r.receipt_id, r.tenant_id, coalesce(r.kind, 'protect'), r.key_id, r.request_id, r.timestamp::timestamptz, r.decision, r.payload, r.content_hash, 'a.b.c',
       r.seq, r.prev_hash, r.chain_hash, r.protect_receipt_id
FROM jsonb_to_recordset($1::jsonb) AS r(receipt_id text, tenant_id text, kind text, key_id text, request_id text, timestamp text, decision text,
                                        payload text, content_hash text, seq bigint, prev_hash text, chain_hash text, protect_receipt_id text)
RETURNING seq, prev_hash, chain_hash;
