-- Tests only: how many stored executes name a protect receipt. $1 protect receipt_id
SELECT count(*)::int AS executes FROM receipts WHERE protect_receipt_id = $1;
