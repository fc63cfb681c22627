-- Queues one message; call it in the transaction of the change that causes it.
-- $1 kind, $2 to_email, $3 tenant_id (or NULL), $4 data (jsonb object)
SELECT mail_enqueue($1, $2, $3, $4::jsonb) AS id;
