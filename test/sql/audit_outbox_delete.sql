-- Tests only: tries to delete a queued operator event. $1 id
DELETE FROM audit_outbox WHERE id = $1 RETURNING id;
