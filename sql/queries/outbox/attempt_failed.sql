-- $1 outbox id, $2 error text, $3 permanent, $4 max attempts, $5 backoff base seconds, $6 backoff cap seconds
-- nullable: status
SELECT outbox_attempt_failed($1, $2, $3, $4, $5, $6) AS status;
