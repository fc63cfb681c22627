-- Tests only: a receipt written straight into the table, bypassing receipt_append(); the
-- trigger still chains it. $1 receipt_id, $2 tenant_id, $3 key_id, $4 request_id,
-- $5 timestamp, $6 decision, $7 payload JCS text, $8 content_hash, $9 seq to claim
INSERT INTO receipts (receipt_id, tenant_id, kind, key_id, request_id, issued_at, decision, payload, content_hash, signature, seq, chain_hash)
VALUES ($1, $2, 'protect', $3, $4, $5::timestamptz, $6, $7, $8, 'a.b.c', $9, '0x' || repeat('0', 64))
RETURNING seq, prev_hash, chain_hash;
