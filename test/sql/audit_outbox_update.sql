-- Tests only: tries to rewrite who made a queued operator event. $1 id
UPDATE audit_outbox SET operator = 'someone else' WHERE id = $1 RETURNING id;
