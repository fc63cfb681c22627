-- Disables an active endpoint that answered 410 Gone, failing its other pending deliveries; false when it was not active.
-- $1 webhook_id, $2 why, $3 the outbox id of the delivery that got the 410
SELECT webhook_disable($1, $2, $3::bigint) AS disabled;
