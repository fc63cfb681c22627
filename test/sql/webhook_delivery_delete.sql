-- Tests only: deletes a delivery's log row (the guard refuses it). $1 delivery_id
DELETE FROM webhook_deliveries WHERE delivery_id = $1 RETURNING delivery_id;
