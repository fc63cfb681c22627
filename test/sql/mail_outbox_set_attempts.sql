-- Tests only: pretend a message has been tried $2 times already. $1 outbox id
UPDATE outbox SET attempts = $2 WHERE id = $1 RETURNING id;
