-- The HTTP status of a delivery's latest attempt (NULL: no answer).
-- $1 tenant_id, $2 outbox id, $3 status code or NULL
SELECT webhook_delivery_attempted($1, $2::bigint, $3::integer) AS recorded;
