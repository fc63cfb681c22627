-- Tests only: what a procedure does to tell a tenant's endpoints of an event. $1 tenant_id, $2 type, $3 data
SELECT webhook_emit($1, $2, $3::jsonb) AS queued;
