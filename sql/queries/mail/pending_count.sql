-- Messages not yet sent (the backlog): due now or waiting for a retry. Reads the partial index.
SELECT count(*)::integer AS pending FROM mail_outbox WHERE status = 'pending';
