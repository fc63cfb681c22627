-- Tests only: queues an operator event as the operator procedures do. $1 tenant_id, $2 event, $3 operator, $4 target (jsonb)
SELECT audit_operator_event($1, $2, $3, $4::jsonb);
