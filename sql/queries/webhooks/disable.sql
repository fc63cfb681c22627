-- Disables an active endpoint that answered 410 Gone, failing its other pending deliveries; false when it was not active.
-- $1 tenant_id, $2 webhook_id, $3 why, $4 the outbox id of the delivery that got the 410
SELECT webhook_disable($1, $2, $3, $4::bigint) AS disabled;
