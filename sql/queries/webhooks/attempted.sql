-- The HTTP status of a delivery's latest attempt (NULL: no answer).
-- $1 outbox id, $2 status code or NULL
SELECT webhook_delivery_attempted($1::bigint, $2::integer) AS recorded;
