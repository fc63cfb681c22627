-- Tests only: hands claimed messages back, due now, as if the claim had not happened. $1 outbox ids
UPDATE outbox SET attempts = greatest(attempts - 1, 0), next_attempt_at = now()
WHERE id = ANY($1::bigint[]) AND status = 'pending' RETURNING id;
