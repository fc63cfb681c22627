-- Tests only: changes an endpoint's URL by hand (the guard refuses it). $1 webhook_id, $2 url
UPDATE webhooks SET url = $2 WHERE webhook_id = $1 RETURNING url;
