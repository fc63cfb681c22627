-- Deletes up to $1 records 24 hours old or more, of every tenant; answers how many.
SELECT idempotency_sweep($1::integer) AS deleted;
