-- $1 outbox id
SELECT mail_outbox_sent($1) AS updated;
