-- A channel's deliveries not yet made (the backlog): due now or waiting for a retry. Reads the partial index.
-- $1 channel
SELECT count(*)::integer AS pending FROM outbox WHERE channel = $1 AND status = 'pending';
