-- Tests only: every idempotency record of a tenant as the text of its whole row. $1 tenant_id
SELECT r::text AS row_text, key_hash FROM idempotency_keys r WHERE r.tenant_id = $1;
