-- How many operators' audit events wait to be signed (the worker's cheap look before it opens a transaction).
SELECT count(*)::integer AS pending FROM audit_outbox WHERE receipt_id IS NULL;
