-- $1 tenant_id, $2 Idempotency-Key, $3 request fingerprint (hex SHA-256)
-- nullable: response_status, response_headers, response_body
SELECT outcome, response_status, response_headers, response_body FROM idempotency_claim($1, $2, $3);
