-- Tests only: deletes an endpoint's row (the guard refuses it). $1 webhook_id
DELETE FROM webhooks WHERE webhook_id = $1 RETURNING webhook_id;
