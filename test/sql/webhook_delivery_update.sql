-- Tests only: changes a delivery's event by hand (the guard refuses it). $1 delivery_id, $2 event
UPDATE webhook_deliveries SET event = $2 WHERE delivery_id = $1 RETURNING delivery_id;
