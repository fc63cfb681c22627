-- $1 outbox id
SELECT outbox_sent($1) AS updated;
