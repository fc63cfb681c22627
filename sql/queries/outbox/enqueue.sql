-- Queues one delivery; call it in the transaction of the change that causes it.
-- $1 channel, $2 kind, $3 recipient, $4 tenant_id (or NULL), $5 data (jsonb object)
SELECT outbox_enqueue($1, $2, $3, $4, $5::jsonb) AS id;
