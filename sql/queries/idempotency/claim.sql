-- $1 tenant_id, $2 SHA-256 hex of the Idempotency-Key, $3 request fingerprint (hex SHA-256)
-- nullable: response_status, response_headers, response_sealed
SELECT outcome, response_status, response_headers, response_sealed FROM idempotency_claim($1, $2, $3);
