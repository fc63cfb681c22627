-- Tests only: an outbox row's status and the seconds from now (the transaction's start) to its next attempt. $1 outbox id
SELECT status, extract(epoch FROM next_attempt_at - now())::float8 AS seconds FROM outbox WHERE id = $1;
