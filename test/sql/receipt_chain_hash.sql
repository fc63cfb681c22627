-- Tests only: the database's chain_hash of given values. $1 prev, $2 content_hash, $3 request_id, $4 timestamp, $5 seq
SELECT receipt_chain_hash($1, $2, $3, $4, $5) AS chain_hash;
