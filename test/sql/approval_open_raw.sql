-- An approval inserted directly, as an operator in psql might. $1 approval_id, $2 tenant_id, $3 key_id, $4 action_hash, $5 protect_receipt_id, $6 created_at
INSERT INTO approvals (approval_id, tenant_id, protect_receipt_id, key_id, action_hash, rule, quorum, roles, execute_within, created_at, expires_at)
VALUES ($1, $2, $5, $3, $4, 'x', 1, ARRAY['owner'], 60, $6::timestamptz, $6::timestamptz + interval '1 hour')
RETURNING approval_id;
