-- Tests only: the database's chain_hash of given values.
-- $1 receipt_id, $2 tenant_id, $3 key_id, $4 kind, $5 request_id, $6 timestamp, $7 content_hash, $8 protect_receipt_id, $9 prev, $10 seq
SELECT receipt_chain_hash($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) AS chain_hash;
